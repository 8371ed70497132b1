# opencode-pty's shell integration for fish, sourced through `fish --init-command` once fish has read the user's
# own configuration. The daemon writes this file for one terminal with its nonce in the line above
# (__opty_nonce). P (prompt, with the working directory), B (end of the prompt), C (the command's output starts,
# with its command line), D (the command ended, with its status), each `ESC ] 133 ; <kind> ... ; opty=<nonce>.<n>
# BEL` where n grows with every mark; plus OSC 7. Nothing here is exported.
set -g __opty_seq 0
set -g __opty_running 0

# Writes the mark $argv[1] (its kind and positional fields) with the extra fields $argv[2] (each starting with ';').
function __opty_mark
    set -g __opty_seq (math $__opty_seq + 1)
    printf '\e]133;%s;opty=%s.%s%s\a' $argv[1] $__opty_nonce $__opty_seq "$argv[2]"
end

function __opty_postexec --on-event fish_postexec
    set -l __opty_status $status
    if test $__opty_running = 1
        set -g __opty_running 0
        __opty_mark "D;$__opty_status"
    end
end

function __opty_prompt_start --on-event fish_prompt
    set -l cwd (string escape --style=url -- $PWD)
    __opty_mark P ";cwd=$cwd"
    printf '\e]7;file://%s%s\a' $hostname $cwd
end

function __opty_preexec --on-event fish_preexec
    set -g __opty_running 1
    __opty_mark C ";cmdline_url="(string escape --style=url -- "$argv")
end

# B at the end of the prompt: the user's fish_prompt, then the mark.
if functions -q fish_prompt
    functions -c fish_prompt __opty_user_prompt
else
    function __opty_user_prompt
        printf '%s> ' $PWD
    end
end
function fish_prompt
    __opty_user_prompt
    __opty_mark B
end
