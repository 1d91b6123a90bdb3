# Sourced by the tool tests: fail with a message, and check a file's lines.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect() {  # expect FILE PATTERN: the file has a line matching the pattern
  grep -Eq "$2" "$1" || fail "$1 has no line matching '$2':"$'\n'"$(cat "$1")"
}
