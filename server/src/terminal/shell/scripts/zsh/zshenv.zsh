# opencode-pty's shell integration for zsh: zsh found this file because the daemon started it with ZDOTDIR set to
# this folder, and it is the one variable the daemon changed. The lines above (written by the daemon) say what
# ZDOTDIR was (__opty_user_zdotdir_set, __opty_user_zdotdir) and the terminal's nonce (__opty_nonce). ZDOTDIR is
# given back before each of the user's files runs; zsh then reads our .zprofile, .zshrc and .zlogin, which do
# the same with the user's own, and the last one installs the marks and leaves ZDOTDIR as the user's files left it.
__opty_dir=$ZDOTDIR

# ZDOTDIR as the user has it.
__opty_restore() {
    if (( __opty_user_zdotdir_set )); then
        export ZDOTDIR=$__opty_user_zdotdir
    else
        unset ZDOTDIR
    fi
}

# Remembers ZDOTDIR as the user's file left it, then points zsh at our next file (`$1` is 1 when one follows).
__opty_next() {
    if (( ${+ZDOTDIR} )); then
        __opty_user_zdotdir_set=1
        __opty_user_zdotdir=$ZDOTDIR
    else
        __opty_user_zdotdir_set=0
    fi
    if (( $1 )); then
        ZDOTDIR=$__opty_dir
    fi
}

__opty_restore
[[ -r ${ZDOTDIR:-$HOME}/.zshenv ]] && source "${ZDOTDIR:-$HOME}/.zshenv"
if [[ -o interactive ]]; then
    __opty_next 1
else
    __opty_next 0
fi
