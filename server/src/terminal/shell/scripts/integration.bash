# opencode-pty's shell integration for bash, read through `bash --rcfile` in place of ~/.bashrc. The daemon
# writes this file for one terminal with two lines above: __opty_nonce (its random nonce) and __opty_login (1 when
# the terminal asked for a login shell, whose files are then read here, since bash reads an rcfile only when it
# is not a login shell). Nothing here is exported: the commands the user runs see the environment as given.

# The user's own files first, as bash would have read them (bash read /etc/bash.bashrc already).
if [[ ${__opty_login-0} == 1 ]]; then
    [[ -r /etc/profile ]] && . /etc/profile
    if [[ -r ~/.bash_profile ]]; then
        . ~/.bash_profile
    elif [[ -r ~/.bash_login ]]; then
        . ~/.bash_login
    elif [[ -r ~/.profile ]]; then
        . ~/.profile
    fi
elif [[ -r ~/.bashrc ]]; then
    . ~/.bashrc
fi

# Then the marks: A (prompt, with the working directory), B (end of the prompt), C (the command's output starts,
# with its command line), D (the command ended, with its status), each `ESC ] 133 ; <kind> ... ; opty=<nonce>.<n>
# BEL` where n grows with every mark; plus OSC 7 for the working directory.
__opty_seq=0
__opty_running=0
__opty_at_prompt=0
__opty_ps1_mark=
__opty_ctl=()
__opty_hex=()
for __opty_i in {1..31} 127; do
    printf -v __opty_h '%02X' "$__opty_i"
    printf -v __opty_c "\\x$__opty_h"
    __opty_ctl+=("$__opty_c")
    __opty_hex+=("$__opty_h")
done
unset __opty_i __opty_h __opty_c

# Percent-encodes '%', ';' and control characters of $1 into __opty_encoded, so that a field never ends a mark.
__opty_encode() {
    local s=$1 i
    s=${s//%/%25}
    s=${s//;/%3B}
    for i in "${!__opty_ctl[@]}"; do
        s=${s//"${__opty_ctl[i]}"/%${__opty_hex[i]}}
    done
    __opty_encoded=$s
}

# Writes the mark $1 (its kind and positional fields) with the extra fields $2 (each starting with ';').
__opty_mark() {
    __opty_seq=$((__opty_seq + 1))
    printf '\e]133;%s;opty=%s.%s%s\a' "$1" "$__opty_nonce" "$__opty_seq" "${2-}"
}

__opty_return() {
    return "$1"
}

# PROMPT_COMMAND: the end of the command that ran (D), the user's prompt commands, then the prompt (A, OSC 7)
# and B at the end of PS1.
__opty_precmd() {
    local __opty_status=$? __opty_pc
    if [[ $__opty_running == 1 ]]; then
        __opty_running=0
        __opty_mark "D;$__opty_status"
    fi
    __opty_at_prompt=0
    for __opty_pc in "${__opty_user_pc[@]}"; do
        if [[ -n $__opty_pc ]]; then
            __opty_return "$__opty_status"
            eval "$__opty_pc"
        fi
    done
    __opty_encode "$PWD"
    __opty_mark A ";cwd=$__opty_encoded"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__opty_encoded"
    # A prompt command may have set PS1 anew; else our last B is still at its end.
    PS1=${PS1%"$__opty_ps1_mark"}
    __opty_seq=$((__opty_seq + 1))
    __opty_ps1_mark="\[\e]133;B;opty=$__opty_nonce.$__opty_seq\a\]"
    PS1+=$__opty_ps1_mark
    __opty_at_prompt=1
    return "$__opty_status"
}

# The DEBUG trap: before the first command of a line read at the prompt, C with the command line (from the
# history when the line was saved there, else the command itself). Written to the terminal itself: the
# command's redirections may already apply.
__opty_preexec() {
    [[ $__opty_at_prompt == 1 ]] || return 0
    __opty_at_prompt=0
    # An empty line: the prompt command runs at once.
    [[ $BASH_COMMAND == __opty_precmd ]] && return 0
    __opty_running=1
    local line= entry
    if [[ -o history ]]; then
        entry=$(HISTTIMEFORMAT= builtin history 1)
        if [[ $entry =~ ^[[:space:]]*([0-9]+)[*]?[[:space:]][[:space:]](.*)$ ]] && [[ ${BASH_REMATCH[1]} == "${HISTCMD-}" ]]; then
            line=${BASH_REMATCH[2]}
        fi
    fi
    [[ -n $line ]] || line=$BASH_COMMAND
    __opty_encode "$line"
    if [[ -w /dev/tty ]]; then
        __opty_mark C ";cmdline_url=$__opty_encoded" 2>/dev/null >/dev/tty
    else
        __opty_mark C ";cmdline_url=$__opty_encoded"
    fi
}

if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    __opty_user_pc=("${PROMPT_COMMAND[@]}")
else
    __opty_user_pc=("${PROMPT_COMMAND-}")
fi
unset PROMPT_COMMAND
PROMPT_COMMAND=__opty_precmd
__opty_user_debug=$(trap -p DEBUG)
if [[ -n $__opty_user_debug ]]; then
    __opty_user_debug=${__opty_user_debug#trap -- }
    __opty_user_debug=${__opty_user_debug% DEBUG}
    eval "__opty_user_debug=$__opty_user_debug"
    trap "__opty_preexec \"\$_\"; $__opty_user_debug" DEBUG
else
    trap '__opty_preexec "$_"' DEBUG
fi
