# What zsh completes for a command line: drives an interactive zsh in a pseudo-terminal with
# hotkernel's completion loaded, presses Tab, and prints each compadd call's matches on a line
# "CAP:<matches>". Usage: zsh -f zsh_capture.zsh COMPLETION_FILE "COMMAND LINE"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1= ; autoload -U compinit; compinit -u -d ${TMPDIR:-/tmp}/hk-zcompdump-$$; source $1"
zpty -w z '_cap_setup() { compadd() { builtin compadd -O _cap_out "$@"; print -r -- "CAP:${(j: :)_cap_out}"; builtin compadd "$@" } }; compprefuncs=( _cap_setup )'
# Completion says it has ended (comppostfuncs run after it): read until then, not for a fixed
# time, which a loaded machine's compinit can outlast.
zpty -w z '_cap_done() { print -r -- "CAP-""END" }; comppostfuncs=( _cap_done )'
zpty -w -n z "$2"$'\t'
local all="" line
integer tries
for (( tries = 0; tries < 600; tries++ )); do  # at most 60 s
  while zpty -r -t z line 2>/dev/null; do all+="$line"; done
  [[ $all == *CAP-END* ]] && break
  sleep 0.1
done
print -r -- "$all" | grep -ao $'CAP:[^\r]*' | grep -v '_cap_out'
zpty -d z
