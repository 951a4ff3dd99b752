# What zsh completes for a command line: drives an interactive zsh in a pseudo-terminal with
# hotkernel's completion loaded, presses Tab, and prints each compadd call's matches on a line
# "CAP:<matches>". Usage: zsh -f zsh_capture.zsh COMPLETION_FILE "COMMAND LINE"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1= ; autoload -U compinit; compinit -u -d ${TMPDIR:-/tmp}/hk-zcompdump-$$; source $1"
zpty -w z '_cap_setup() { compadd() { builtin compadd -O _cap_out "$@"; print -r -- "CAP:${(j: :)_cap_out}"; builtin compadd "$@" } }; compprefuncs=( _cap_setup )'
zpty -w -n z "$2"$'\t'
sleep 1.5
local all="" line
while zpty -r -t z line 2>/dev/null; do all+="$line"; done
print -r -- "$all" | grep -ao $'CAP:[^\r]*' | grep -v '_cap_out'
zpty -d z
