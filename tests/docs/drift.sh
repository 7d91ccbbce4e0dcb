#!/bin/bash
# drift.sh - the man pages and the shell completions stay true to the option
# tables in cmd/ (which `tcx --complete` prints), as curl's and git's
# documentation checks do:
#   - every command has a man page whose OPTIONS section has an entry for
#     each of its long options (*--option*) and for no other, and every exit
#     code and status code is in tcx(1);
#   - the actions a command takes (tcx logic show, tcx results merge) are
#     the ones its synopses name, in --help and in its man page, and each
#     synopsis line names exactly the options the table gives its action;
#   - bash completion, driven for real (COMP_WORDS/COMP_CWORD and the
#     completion function), offers every command, every option (long after
#     --, short and long after -), the global options -v, --verbose, -q and
#     --quiet after each command as cmd_getopt takes them there, the actions
#     and the options of each, the values of enumerated options, device ids
#     and file names;
#   - zsh and fish completion, when those shells are installed, offer the
#     same (zsh through a pseudo-terminal, fish with `complete -C`); when
#     they are not, the test says so and checks the rest.
# Needs TCX and TCX_SOURCE_DIR.
. "${TCX_SOURCE_DIR:?}/tests/cli/lib.sh"
src=$TCX_SOURCE_DIR
man=$src/man
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3 || true)

# a `tcx` on PATH that is the binary under test, for the completions
mkdir -p "$scratch/bin"
ln -s "$TCX" "$scratch/bin/tcx"
export PATH="$scratch/bin:$PATH"

# bad MESSAGE: counts and prints a failure
bad() {
	failures=$((failures + 1))
	echo "FAIL: $*"
}

# expect_has WHAT LIST WORD...: each WORD is a line of LIST
expect_has() {
	local what=$1 list=$2 w
	shift 2
	for w in "$@"; do
		checks=$((checks + 1))
		printf '%s\n' "$list" | grep -qxF -- "$w" ||
			bad "$what: '$w' missing; got: $(printf '%s' "$list" | tr '\n' ' ' | head -c 600)"
	done
}

# expect_same WHAT LIST WORD...: LIST is exactly the WORDs (as sets)
expect_same() {
	local what=$1 list=$2
	shift 2
	local got want
	got=$(printf '%s\n' "$list" | sed '/^$/d' | sort -u)
	want=$(printf '%s\n' "$@" | sort -u)
	checks=$((checks + 1))
	[ "$got" = "$want" ] || bad "$what: got [$(printf '%s' "$list" | tr '\n' ' ')], want [$*]"
}

commands=$("$TCX" --complete | grep -vx help)

# longs: the long options among the words on stdin (the completions offer
# the short forms too, after a lone -)
longs() { grep -- '^--'; }
# the global options, which every command takes after its name too
globals="-v --verbose -q --quiet"
[ -n "$commands" ] || { echo "FAIL: tcx --complete lists no command"; exit 1; }

# ---- man pages ------------------------------------------------------------

for cmd in $commands; do
	page=$man/tcx-$cmd.1.scd
	checks=$((checks + 1))
	if [ ! -f "$page" ]; then
		failures=$((failures + 1))
		echo "FAIL: command '$cmd' has no man page (man/tcx-$cmd.1.scd)"
		continue
	fi
	# the options the page defines: the terms (lines starting with *-) of
	# its OPTIONS section, such as "*-f*, *--format* _fmt_"
	documented=$(sed -n '/^# OPTIONS/,/^# [A-Z]/p' "$page" | grep '^\*-' |
		grep -o -- '\*--[a-z0-9-]*\*' | tr -d '*' | sort -u)
	table=$("$TCX" --complete "$cmd")
	for opt in $table; do
		checks=$((checks + 1))
		printf '%s\n' "$documented" | grep -qxF -- "$opt" ||
			bad "man/tcx-$cmd.1.scd, OPTIONS: no entry for '*$opt*'"
	done
	for opt in $documented; do
		checks=$((checks + 1))
		printf '%s\n' "$table" | grep -qxF -- "$opt" ||
			bad "man/tcx-$cmd.1.scd documents '$opt', which 'tcx $cmd' lacks"
	done
	checks=$((checks + 1))
	grep -qF -- "*tcx-$cmd*(1)" "$man/tcx.1.scd" ||
		bad "tcx(1) does not list '*tcx-$cmd*(1)'"
done

# every exit code of cmd/cmd.h in tcx(1)'s EXIT STATUS, and every status
# code of include/tcx.h in its mapping of status codes to exit codes
exit_status=$(sed -n '/^# EXIT STATUS/,/^# /p' "$man/tcx.1.scd")
codes=$(sed -n 's/^[[:space:]]*TCX_EXIT_[A-Z]* = \([0-9]*\),.*/\1/p' "$src/cmd/cmd.h")
[ -n "$codes" ] || bad "no TCX_EXIT_ codes found in cmd/cmd.h"
for code in $codes; do
	checks=$((checks + 1))
	printf '%s\n' "$exit_status" | grep -qx "\*$code\*" ||
		bad "exit code $code is not in tcx(1)'s EXIT STATUS"
done
statuses=$(sed -n 's/^[[:space:]]*\(TCX_E[A-Z]*\) = [0-9]*,.*/\1/p' "$src/include/tcx.h")
[ -n "$statuses" ] || bad "no status codes found in include/tcx.h"
for s in $statuses; do
	checks=$((checks + 1))
	printf '%s\n' "$exit_status" | grep -qF -- "*$s*" ||
		bad "status $s is not in tcx(1)'s EXIT STATUS"
done

# ---- actions -------------------------------------------------------------------

# long_of CMD -X: the long name of short option -X of CMD, from its --help
long_of() {
	"$TCX" "$1" --help | sed -n "s/^ *$2, \(--[a-z0-9-]*\).*/\1/p"
}

# help_synopses CMD: the synopsis lines of `tcx CMD --help`, one per line
# ("tcx logic show [--format <fmt>] <file>"), wrapped lines joined
help_synopses() {
	"$TCX" "$1" --help | awk '
		/^usage: / { sub(/^usage: /, ""); l = $0; next }
		/^   or: / { print l; sub(/^   or: /, ""); l = $0; next }
		/^$/ { print l; exit }
		{ sub(/^ +/, " "); l = l $0 }'
}

# man_synopses CMD: the same from man/tcx-CMD.1.scd, markup removed
man_synopses() {
	sed -n '/^# SYNOPSIS/,/^# [A-Z]/p' "$man/tcx-$1.1.scd" | sed '1d;$d' |
		tr -d '*_\\' | awk 'BEGIN { RS = "" } { gsub(/\n/, " "); print }'
}

# check_synopses CMD WHERE LINES: every action of CMD has a synopsis line,
# every line names an action of CMD or none, and names exactly the options
# `tcx --complete CMD --options [ACTION]` lists
check_synopses() {
	local cmd=$1 where=$2 lines=$3 acts line word act opts seen=""
	acts=$("$TCX" --complete "$cmd" --actions)
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		word=$(printf '%s\n' "$line" | awk '{ print $3 }')
		act=
		if printf '%s\n' "$acts" | grep -qxF -- "$word"; then
			act=$word
		elif [[ $word == [a-z]* ]]; then
			checks=$((checks + 1))
			bad "$where: 'tcx $cmd $word' is not an action the table of '$cmd' has (--complete $cmd --actions: $(echo $acts))"
			continue
		fi
		seen+=" $act"
		opts=$(for o in $(printf '%s\n' "$line" | grep -oE -- '(^|[][ (|])--?[a-zA-Z0-9-]+' |
			sed 's/^[][ (|]*//' | sed 's/=.*//'); do
			case $o in --*) echo "$o" ;; *) long_of "$cmd" "$o" ;; esac
		done)
		# shellcheck disable=SC2046,SC2086
		expect_same "$where: options of 'tcx $cmd${act:+ $act}'" "$opts" \
			$("$TCX" --complete "$cmd" --options $act | longs |
				grep -vx -e --help -e --verbose -e --quiet)
	done <<<"$lines"
	for act in $acts; do
		checks=$((checks + 1))
		[[ " $seen " == *" $act "* ]] || bad "$where: no synopsis line for 'tcx $cmd $act'"
	done
}

for cmd in $commands; do
	[ -n "$("$TCX" --complete "$cmd" --actions)" ] || continue
	check_synopses "$cmd" "tcx $cmd --help" "$(help_synopses "$cmd")"
	check_synopses "$cmd" "man/tcx-$cmd.1.scd" "$(man_synopses "$cmd")"
	# every option is offered with some action, or with none
	offered=$(for act in '' $("$TCX" --complete "$cmd" --actions); do
		# shellcheck disable=SC2086
		"$TCX" --complete "$cmd" --options $act
	done)
	# shellcheck disable=SC2046
	expect_has "options of '$cmd' with its actions" "$offered" $("$TCX" --complete "$cmd")
done

# ---- bash, for real ---------------------------------------------------------

# bash_complete LINE: the candidates bash completion offers at the end of
# LINE.  The line is split into COMP_WORDS as bash splits it, '=' and ':'
# (COMP_WORDBREAKS) making words of their own.
bash_complete() {
	bash -c '
		[ -r /usr/share/bash-completion/bash_completion ] &&
			. /usr/share/bash-completion/bash_completion
		. "$1"
		line=$2
		COMP_LINE=$line
		COMP_POINT=${#line}
		COMP_WORDS=()
		read -ra toks <<<"$line"
		for tok in "${toks[@]}"; do
			while [[ -n $tok ]]; do
				if [[ $tok == [=:]* ]]; then
					piece=${tok%%[!=:]*}
				else
					piece=${tok%%[=:]*}
				fi
				COMP_WORDS+=("$piece")
				tok=${tok#"$piece"}
			done
		done
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		fn=$(complete -p tcx 2>/dev/null | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		[ -n "$fn" ] || { echo "no completion function for tcx" >&2; exit 1; }
		"$fn" tcx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$src/completions/bash/tcx" "$1"
}

cd "$scratch" || exit 1
touch afile.npy
expect_has "bash: commands" "$(bash_complete 'tcx ')" $commands help
expect_has "bash: global options" "$(bash_complete 'tcx --')" --help --version
expect_has "bash: 'tcx help <TAB>'" "$(bash_complete 'tcx help ')" $commands
for cmd in $commands; do
	# (a command with actions: those it takes given none, see below)
	expect_same "bash: options of '$cmd'" "$(bash_complete "tcx $cmd --")" \
		$("$TCX" --complete "$cmd" --options | longs)
	expect_same "bash: options of '$cmd', short and long" "$(bash_complete "tcx $cmd -")" \
		$("$TCX" --complete "$cmd" --options)
	# shellcheck disable=SC2086
	expect_has "bash: global options after '$cmd'" "$(bash_complete "tcx $cmd -")" $globals
	# ... which the command takes there
	for opt in $globals; do
		checks=$((checks + 1))
		"$TCX" "$cmd" "$opt" --help >/dev/null 2>&1 ||
			bad "'tcx $cmd $opt --help' fails, though its completion offers '$opt'"
	done
	for opt in $("$TCX" --complete "$cmd"); do
		what=$("$TCX" --complete "$cmd" "$opt")
		case $what in
		@device)
			expect_has "bash: '$cmd $opt <TAB>'" "$(bash_complete "tcx $cmd $opt ")" host
			expect_has "bash: '$cmd $opt=<TAB>'" "$(bash_complete "tcx $cmd $opt=")" host ;;
		@file)
			expect_has "bash: '$cmd $opt <TAB>'" "$(bash_complete "tcx $cmd $opt af")" afile.npy ;;
		@dir | @text | @none | '') ;;
		*)
			# shellcheck disable=SC2086
			expect_same "bash: '$cmd $opt <TAB>'" "$(bash_complete "tcx $cmd $opt ")" $what
			# shellcheck disable=SC2086
			expect_same "bash: '$cmd $opt=<TAB>'" "$(bash_complete "tcx $cmd $opt=")" $what ;;
		esac
	done
done
expect_same "bash: '-t' short option values" "$(bash_complete 'tcx parse -t ')" \
	$("$TCX" --complete parse --type)
expect_same "bash: a device id past ':'" "$(bash_complete 'tcx validate --device opencl:')" \
	$("$TCX" --complete --devices | sed -n 's/^opencl://p')
expect_has "bash: '-i A=<file>'" "$(bash_complete 'tcx run -i A=af')" afile.npy
for cmd in $commands; do
	[ -z "$("$TCX" --complete "$cmd" --actions)" ] || continue # below
	case $("$TCX" --complete "$cmd" --args) in
	*file*) expect_has "bash: '$cmd <file>'" "$(bash_complete "tcx $cmd af")" afile.npy ;;
	esac
done
# actions (tcx logic show, tcx results merge): offered until one is given,
# each one a word the command takes, then files and the action's options
expect_same "bash: 'tcx logic <TAB>'" "$(bash_complete 'tcx logic ')" \
	show import export lookup eval
expect_same "bash: 'tcx logic --<TAB>'" "$(bash_complete 'tcx logic --')" --help --verbose --quiet
expect_same "bash: 'tcx logic eval --<TAB>'" "$(bash_complete 'tcx logic eval --')" \
	--holdout --holdout-range --device --db --choices --min-time --format --output --help \
	--verbose --quiet
expect_same "bash: 'tcx logic export -<TAB>'" "$(bash_complete 'tcx logic export -')" \
	--tensile -o --output -h --help -v --verbose -q --quiet
expect_same "bash: 'tcx logic export --tensile=<TAB>'" \
	"$(bash_complete 'tcx logic export --tensile=')" v3 v4
expect_same "bash: 'tcx logic eval --format <TAB>'" \
	"$(bash_complete 'tcx logic eval --format ')" table json yaml
expect_has "bash: 'tcx logic eval --device <TAB>'" \
	"$(bash_complete 'tcx logic eval --device ')" host
expect_has "bash: 'tcx logic eval --db <file>'" "$(bash_complete 'tcx logic eval --db af')" afile.npy
expect_same "bash: 'tcx results <TAB>'" "$(bash_complete 'tcx results ')" merge
expect_same "bash: 'tcx results --status ok <TAB>'" "$(bash_complete 'tcx results --status ok ')" merge
expect_same "bash: 'tcx results --<TAB>'" "$(bash_complete 'tcx results --')" \
	--db --device --problem --status --format --help --verbose --quiet
expect_same "bash: 'tcx results merge --<TAB>'" "$(bash_complete 'tcx results merge --')" \
	--output --help --verbose --quiet
expect_has "bash: 'tcx results merge <file>'" "$(bash_complete 'tcx results merge a.db af')" afile.npy
for cmd in $commands; do
	acts=$("$TCX" --complete "$cmd" --actions)
	[ -n "$acts" ] || continue
	# shellcheck disable=SC2086
	expect_same "bash: actions of '$cmd'" "$(bash_complete "tcx $cmd ")" $acts
	for act in $acts; do
		expect_has "bash: '$cmd $act <file>'" "$(bash_complete "tcx $cmd $act af")" afile.npy
		expect_same "bash: options of '$cmd $act'" "$(bash_complete "tcx $cmd $act --")" \
			$("$TCX" --complete "$cmd" --options "$act" | longs)
		# shellcheck disable=SC2086
		expect_has "bash: global options after '$cmd $act'" \
			"$(bash_complete "tcx $cmd $act -")" $globals
		checks=$((checks + 1))
		"$TCX" "$cmd" "$act" 2>&1 | grep -Eq "unknown (action|argument) '$act'" &&
			bad "'tcx $cmd' does not take the action '$act' its table lists"
		# the options not offered with the action are refused with it
		for opt in $("$TCX" --complete "$cmd"); do
			"$TCX" --complete "$cmd" --options "$act" | grep -qxF -- "$opt" && continue
			checks=$((checks + 1))
			# a value the option takes, if it takes one
			val=$("$TCX" --complete "$cmd" "$opt" | head -n 1)
			case $val in
			@none) arg=$opt ;;
			@*) arg=$opt=afile.npy ;;
			*) arg=$opt=$val ;;
			esac
			"$TCX" "$cmd" "$act" "$arg" afile.npy 2>&1 |
				grep -qF "option '$opt' does not apply to 'tcx $cmd $act'" ||
				bad "'tcx $cmd $act $opt' is not refused, though its completion leaves '$opt' out"
		done
	done
	checks=$((checks + 1))
	"$TCX" "$cmd" no-such-action 2>&1 | grep -Eq "unknown (action|argument)" ||
		bad "'tcx $cmd no-such-action' is not refused as unknown"
done

# ---- zsh, for real, when installed ------------------------------------------

if command -v zsh >/dev/null; then
	checks=$((checks + 1))
	zsh -n "$src/completions/zsh/_tcx" || bad "zsh -n _tcx"
	if [ -n "$py" ]; then
		lines=('tcx ' 'tcx parse --format ' 'tcx bench --device ' 'tcx logic ' 'tcx results '
			'tcx results --status ok ' 'tcx logic eval --format ')
		for cmd in $commands; do
			for act in $("$TCX" --complete "$cmd" --actions); do
				lines+=("tcx $cmd $act --")
			done
		done
		for cmd in $commands; do lines+=("tcx $cmd --" "tcx $cmd -"); done
		zout=$($py "$src/tests/docs/zshcomp.py" "$src/completions/zsh" "${lines[@]}")
		zsh_for() { printf '%s\n' "$zout" | awk -F '\t' -v l="$1" '$1 == l { print $2 }'; }
		expect_has "zsh: commands" "$(zsh_for 'tcx ')" $commands
		expect_same "zsh: 'parse --format <TAB>'" "$(zsh_for 'tcx parse --format ')" \
			$("$TCX" --complete parse --format)
		expect_has "zsh: 'bench --device <TAB>'" "$(zsh_for 'tcx bench --device ')" host
		expect_same "zsh: 'logic <TAB>'" "$(zsh_for 'tcx logic ')" show import export lookup eval
		expect_same "zsh: 'results <TAB>'" "$(zsh_for 'tcx results ')" merge
		expect_same "zsh: 'results --status ok <TAB>'" "$(zsh_for 'tcx results --status ok ')" merge
		expect_same "zsh: 'logic eval --format <TAB>'" "$(zsh_for 'tcx logic eval --format ')" \
			table json yaml
		expect_same "zsh: 'logic eval --<TAB>'" "$(zsh_for 'tcx logic eval --')" --holdout \
			--holdout-range --device --db --choices --min-time --format --output --help \
			--verbose --quiet
		expect_same "zsh: 'results merge --<TAB>'" "$(zsh_for 'tcx results merge --')" \
			--output --help --verbose --quiet
		for cmd in $commands; do
			expect_same "zsh: options of '$cmd'" "$(zsh_for "tcx $cmd --")" \
				$("$TCX" --complete "$cmd" --options | longs)
			expect_same "zsh: options of '$cmd', short and long" "$(zsh_for "tcx $cmd -")" \
				$("$TCX" --complete "$cmd" --options)
			# shellcheck disable=SC2086
			expect_has "zsh: global options after '$cmd'" "$(zsh_for "tcx $cmd -")" $globals
			for act in $("$TCX" --complete "$cmd" --actions); do
				expect_same "zsh: options of '$cmd $act'" "$(zsh_for "tcx $cmd $act --")" \
					$("$TCX" --complete "$cmd" --options "$act" | longs)
			done
		done
	fi
else
	echo "note: zsh is not installed: its completion is not checked"
fi

# ---- fish, for real, when installed -----------------------------------------

if command -v fish >/dev/null; then
	checks=$((checks + 1))
	fish -n "$src/completions/fish/tcx.fish" ||
		bad "fish -n tcx.fish"
	fish_complete() {
		fish --no-config -c "source '$src/completions/fish/tcx.fish'; complete -C '$1'" |
			cut -f1
	}
	expect_has "fish: commands" "$(fish_complete 'tcx ')" $commands
	for cmd in $commands; do
		expect_same "fish: options of '$cmd'" "$(fish_complete "tcx $cmd --")" \
			$("$TCX" --complete "$cmd" --options | longs)
		expect_same "fish: options of '$cmd', short and long" "$(fish_complete "tcx $cmd -")" \
			$("$TCX" --complete "$cmd" --options)
		# shellcheck disable=SC2086
		expect_has "fish: global options after '$cmd'" "$(fish_complete "tcx $cmd -")" $globals
		for act in $("$TCX" --complete "$cmd" --actions); do
			expect_same "fish: options of '$cmd $act'" "$(fish_complete "tcx $cmd $act --")" \
				$("$TCX" --complete "$cmd" --options "$act" | longs)
		done
	done
	expect_same "fish: 'logic eval --<TAB>'" "$(fish_complete 'tcx logic eval --')" --holdout \
		--holdout-range --device --db --choices --min-time --format --output --help \
		--verbose --quiet
	expect_same "fish: 'results merge --<TAB>'" "$(fish_complete 'tcx results merge --')" \
		--output --help --verbose --quiet
	expect_same "fish: 'results --status ok <TAB>'" "$(fish_complete 'tcx results --status ok ')" merge
	expect_same "fish: 'logic eval --format <TAB>'" "$(fish_complete 'tcx logic eval --format ')" \
		table json yaml
	expect_same "fish: 'parse --format <TAB>'" "$(fish_complete 'tcx parse --format ')" \
		$("$TCX" --complete parse --format)
	expect_has "fish: 'bench --device <TAB>'" "$(fish_complete 'tcx bench --device ')" host
	expect_same "fish: 'logic <TAB>'" "$(fish_complete 'tcx logic ')" show import export lookup eval
	expect_same "fish: 'results <TAB>'" "$(fish_complete 'tcx results ')" merge
	expect_has "fish: 'logic show <file>'" "$(fish_complete 'tcx logic show af')" afile.npy
	expect_has "fish: '-i A=<file>'" "$(fish_complete 'tcx run -i A=af')" A=afile.npy
	for cmd in $commands; do
		[ -z "$("$TCX" --complete "$cmd" --actions)" ] || continue
		case $("$TCX" --complete "$cmd" --args) in
		*file*) expect_has "fish: '$cmd <file>'" "$(fish_complete "tcx $cmd af")" afile.npy ;;
		esac
	done
else
	echo "note: fish is not installed: its completion is not checked"
fi

done_testing
