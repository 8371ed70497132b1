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

# Then the marks: P (prompt, with the working directory), B (end of the prompt), C (the command's output starts,
# with its command line), D (the command ended, with its status), each `ESC ] 133 ; <kind> ... ; opty=<nonce>.<n>
# BEL` where n grows with every mark; plus OSC 7 for the working directory.
__opty_seq=0
__opty_running=0
__opty_was_running=0
__opty_hist=0
__opty_z=
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

# PROMPT_COMMAND: the end of the command that ran (D), the user's prompt commands, then the prompt (P, OSC 7),
# B at the end of PS1 and C at the end of PS0.
__opty_precmd() {
    local __opty_status=$? __opty_pc
    if [[ $__opty_running == 1 ]]; then
        __opty_running=0
        __opty_mark "D;$__opty_status"
    fi
    for __opty_pc in "${__opty_user_pc[@]}"; do
        if [[ -n $__opty_pc ]]; then
            __opty_return "$__opty_status"
            eval "$__opty_pc"
        fi
    done
    __opty_encode "$PWD"
    __opty_mark P ";cwd=$__opty_encoded"
    printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$__opty_encoded"
    # A prompt command may have set PS1 anew; else our last B is still at its end.
    PS1=${PS1%"$__opty_ps1_mark"}
    __opty_seq=$((__opty_seq + 1))
    __opty_ps1_mark="\[\e]133;B;opty=$__opty_nonce.$__opty_seq\a\]"
    PS1+=$__opty_ps1_mark
    PS0=${PS0-}; PS0=${PS0%"$__opty_ps0"}$__opty_ps0
    # The number the next line gets in the history, if bash saves it there.
    __opty_hist=${HISTCMD-0}
    return "$__opty_status"
}

# PS0, which bash expands once it has read a command and before it runs it (not for an empty line): C with the
# command line, once per line read at the prompt. Its arithmetic runs in the shell itself (the running flag and the mark's number); the command
# substitution in a subshell, which takes the line from the history when bash saved it there (else it is left
# empty). PS0 goes to the terminal whatever the command's own redirections.
__opty_ps0='${__opty_z:$((__opty_was_running=__opty_running,__opty_running=1,__opty_seq+=1,0)):0}$(__opty_output_mark)'
__opty_output_mark() {
    local entry line=
    # A line of several commands (a pasted block) shows PS0 before each: the first one's mark stands for all,
    # and the end mark comes once, with the status of the last.
    [[ $__opty_was_running == 1 ]] && return
    if [[ -o history ]]; then
        entry=$(HISTTIMEFORMAT= builtin history 1)
        # "  123  text" (a '*' after the number marks an edited entry)
        if [[ $entry =~ ^[[:space:]]*([0-9]+)[*]?[[:space:]][[:space:]](.*)$ ]] && [[ ${BASH_REMATCH[1]} == "$__opty_hist" ]]; then
            line=${BASH_REMATCH[2]}
        fi
    fi
    __opty_encode "$line"
    printf '\e]133;C;opty=%s.%s;cmdline_url=%s\a' "$__opty_nonce" "$__opty_seq" "$__opty_encoded"
}

# The prompt commands the user's files left (a string, or an array since bash 5.1), run by ours.
if [[ -z ${PROMPT_COMMAND+set} ]]; then
    __opty_user_pc=()
elif [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    __opty_user_pc=("${PROMPT_COMMAND[@]}")
else
    __opty_user_pc=("$PROMPT_COMMAND")
fi
unset PROMPT_COMMAND
PROMPT_COMMAND=__opty_precmd
