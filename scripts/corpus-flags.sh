# Sourced by the benchmarks that train on a parallel corpus directory (train.{en,de}, dev.{en,de}).
# corpus_flags DIR [SPLIT ...] checks that DIR holds train, dev and each further SPLIT named, as
# SPLIT.en and SPLIT.de (exit 2 with one line naming what is missing), and sets the array
# corpus_sets to the --set flags that point a config's data section at DIR.
corpus_flags() {
  local dir=$1 split
  shift
  for split in train dev "$@"; do
    [[ -f $dir/$split.en && -f $dir/$split.de ]] || {
      echo "$(basename "$0"): $dir has no $split.en/$split.de" >&2
      exit 2
    }
  done
  corpus_sets=(--set "data.train.src=$dir/train.en" --set "data.train.tgt=$dir/train.de"
               --set "data.dev.src=$dir/dev.en" --set "data.dev.tgt=$dir/dev.de")
}
