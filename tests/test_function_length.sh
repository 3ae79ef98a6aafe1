#!/bin/sh
# No function in agent/, topology/ or kernel/ is longer than 100 lines
# (docs/STYLE.md: functions fit on
# a screen or two).  A function runs from its first signature line (a line
# at column 0 that opens a parameter list) to the closing brace at column 0.
# Prints every offender as FILE:LINE: NAME is N lines; exits 1 if any.
set -u
SRC="${PODKERNEL_SRC:-.}"
MAX=${MAX_FUNCTION_LINES:-100}
cd "$SRC" || exit 1
files=$(find agent topology kernel -name '*.c' | sort)
[ -n "$files" ] || { echo "FAIL: no C files under agent/, topology/, kernel/ in $SRC"; exit 1; }
out=$(awk -v max="$MAX" '
	FNR == 1 { sig = 0; body = 0 }
	# a signature starts at column 0 with an identifier and a parameter list
	!body && /^[A-Za-z_][A-Za-z0-9_ \t\*]*[ \t\*]\**[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
		sig = FNR; name = $0; sub(/\(.*/, "", name); sub(/.*[ \t\*]/, "", name)
	}
	!body && sig && /^\{/ { body = 1; next }
	body && /^\}/ {
		n = FNR - sig + 1
		if (n > max) printf "%s:%d: %s is %d lines (over %d)\n", FILENAME, sig, name, n, max
		body = 0; sig = 0
	}
	!body && /;[ \t]*$/ && !/^[ \t]/ { sig = 0 }
' $files)
longest=$(awk '
	FNR == 1 { sig = 0; body = 0 }
	!body && /^[A-Za-z_][A-Za-z0-9_ \t\*]*[ \t\*]\**[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
		sig = FNR; name = $0; sub(/\(.*/, "", name); sub(/.*[ \t\*]/, "", name)
	}
	!body && sig && /^\{/ { body = 1; next }
	body && /^\}/ { n = FNR - sig + 1; if (n > best) { best = n; where = FILENAME ":" sig ": " name }
		body = 0; sig = 0 }
	!body && /;[ \t]*$/ && !/^[ \t]/ { sig = 0 }
	END { printf "%s (%d lines)\n", where, best }
' $files)
if [ -n "$out" ]; then
	echo "$out" | sed 's/^/FAIL: /'
	echo "longest: $longest"
	exit 1
fi
echo "test_function_length: no function in agent/, topology/, kernel/ over $MAX lines; longest $longest"
