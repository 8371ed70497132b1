# opencode-pty's shell integration for zsh (a login shell): the user's .zprofile, then on to our .zshrc.
__opty_restore
[[ -r ${ZDOTDIR:-$HOME}/.zprofile ]] && source "${ZDOTDIR:-$HOME}/.zprofile"
__opty_next 1
