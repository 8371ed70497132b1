# opencode-pty's shell integration for zsh: the marks, once the user's files have run. P (prompt, with the
# working directory), B (end of the prompt), C (the command's output starts, with its command line), D (the
# command ended, with its status), each `ESC ] 133 ; <kind> ... ; opty=<nonce>.<n> BEL` where n grows with every
# mark; plus OSC 7. Nothing here is exported.
unfunction __opty_restore __opty_next 2>/dev/null
typeset -g __opty_seq=0 __opty_running=0 __opty_ps1_mark=

# Percent-encodes '%', ';' and control characters of $1 into REPLY, so that a field never ends a mark.
__opty_encode() {
    emulate -L zsh
    local s=$1 c h i
    s=${s//\%/%25}
    s=${s//;/%3B}
    for i in {1..31} 127; do
        c=${(#)i}
        printf -v h '%02X' $i
        s=${s//$c/%$h}
    done
    REPLY=$s
}

# Writes the mark $1 (its kind and positional fields) with the extra fields $2 (each starting with ';').
__opty_mark() {
    (( __opty_seq++ ))
    printf '\e]133;%s;opty=%s.%s%s\a' "$1" "$__opty_nonce" "$__opty_seq" "$2"
}

# The first precmd hook: the end of the command that ran (D), then the prompt (P, OSC 7).
__opty_precmd() {
    local __opty_status=$?
    emulate -L zsh
    if (( __opty_running )); then
        __opty_running=0
        __opty_mark "D;$__opty_status"
    fi
    __opty_encode "$PWD"
    __opty_mark P ";cwd=$REPLY"
    printf '\e]7;file://%s%s\a' "$HOST" "$REPLY"
    return $__opty_status
}

# The last precmd hook: B at the end of PS1 (a hook before it may have set PS1 anew).
__opty_prompt() {
    local __opty_status=$?
    PS1=${PS1%"$__opty_ps1_mark"}
    (( __opty_seq++ ))
    __opty_ps1_mark="%{"$'\e'"]133;B;opty=$__opty_nonce.$__opty_seq"$'\a'"%}"
    PS1+=$__opty_ps1_mark
    return $__opty_status
}

# preexec: C with the command line as typed.
__opty_preexec() {
    emulate -L zsh
    __opty_running=1
    __opty_encode "${1:-$2}"
    __opty_mark C ";cmdline_url=$REPLY"
}

typeset -ga precmd_functions preexec_functions
precmd_functions=(__opty_precmd ${precmd_functions:#__opty_*} __opty_prompt)
preexec_functions=(${preexec_functions:#__opty_*} __opty_preexec)
