#!/usr/bin/env bash
# Checks the layering of src/ against src/CMakeLists.txt: each library (a folder of src/) must
# declare in DEPS exactly the libraries whose headers it includes, and headers in a library's
# subfolders (tensor/ops/...) are private to that library. Prints one line per violation and
# exits 1 if there is any. Usage: check-includes.sh [SRC_DIR] (default: the repository's src/).
set -euo pipefail
src="${1:-$(cd "$(dirname "$0")/../src" && pwd)}"
cmake_file="$src/CMakeLists.txt"
[ -f "$cmake_file" ] || { echo "check-includes: no $cmake_file" >&2; exit 2; }

declare -A declared=()
modules=()
while read -r line; do
  name=$(sed -E 's/^heed_module\(([a-z_]+).*/\1/' <<<"$line")
  deps=$(sed -E 's/^heed_module\([a-z_]+//; s/\)$//; s/LIBS.*//; s/DEPS//' <<<"$line" | tr ' ' '\n' |
         sed -n 's/^heed_//p' | sort -u | tr '\n' ' ')
  modules+=("$name")
  declared[$name]="$deps"
done < <(grep -E '^heed_module\([a-z_]+' "$cmake_file")

is_module() { local m; for m in "${modules[@]}"; do [ "$m" = "$1" ] && return 0; done; return 1; }

status=0
for module in "${modules[@]}"; do
  [ -d "$src/$module" ] || { echo "$module: declared in $cmake_file but src/$module does not exist"; status=1; continue; }
  used=""
  while IFS=: read -r file include; do
    target=${include%%/*}
    is_module "$target" || continue
    [ "$target" = "$module" ] && continue
    used+="$target"$'\n'
    rest=${include#*/}
    if [[ "$rest" == */* ]]; then
      echo "${file#"$src"/}: includes $include, a private header of $target (its subfolders are its own)"
      status=1
    fi
  done < <(grep -rHoE '^#include "[a-z_]+/[^"]+"' "$src/$module" --include='*.hpp' --include='*.cpp' |
           sed -E 's/:#include "/:/; s/"$//')
  used=$(sort -u <<<"$used" | grep -v '^$' | tr '\n' ' ' || true)
  if [ "$used" != "${declared[$module]}" ]; then
    echo "$module: includes [ ${used}] but DEPS declares [ ${declared[$module]}] in src/CMakeLists.txt"
    status=1
  fi
done
exit $status
