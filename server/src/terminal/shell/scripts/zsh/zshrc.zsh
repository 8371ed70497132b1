# opencode-pty's shell integration for zsh: the user's .zshrc, then the marks (or, for a login shell, on to our
# .zlogin, the last file zsh reads).
__opty_restore
[[ -r ${ZDOTDIR:-$HOME}/.zshrc ]] && source "${ZDOTDIR:-$HOME}/.zshrc"
if [[ -o login ]]; then
    __opty_next 1
else
    __opty_next 0
    __opty_restore
    source "$__opty_dir/integration.zsh"
fi
