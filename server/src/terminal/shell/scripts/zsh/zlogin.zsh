# opencode-pty's shell integration for zsh (a login shell): the user's .zlogin, then the marks.
__opty_restore
[[ -r ${ZDOTDIR:-$HOME}/.zlogin ]] && source "${ZDOTDIR:-$HOME}/.zlogin"
__opty_next 0
__opty_restore
source "$__opty_dir/integration.zsh"
