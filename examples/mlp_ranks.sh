#!/usr/bin/env bash
# mlp --quick on several processes under mpirun against one process: every
# epoch's losses and accuracies the same, up to the order of the sums.
#   mlp_ranks.sh MPIEXEC NP_FLAG RANKS MLP [MLP'S FLAGS, e.g. --data DIR]
set -euo pipefail
mpiexec=$1 np_flag=$2 ranks=$3 mlp=$4
shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$mlp" --quick "$@" --out "$out/one"
"$mpiexec" "$np_flag" "$ranks" "$mlp" --quick "$@" --out "$out/ranks"

# Columns 2-5 of curves.csv: train loss and accuracy, validation loss and
# accuracy. f32 sums in another order part by some 1e-6 a step; five epochs
# of training carry that to about 1e-4 of a loss. An accuracy moves by an
# image or two (1/1000 of the validation set). A wrong share of the minibatch
# or a missed sum moves them by far more.
paste -d, "$out/one/curves.csv" "$out/ranks/curves.csv" | awk -F, -v ranks="$ranks" '
  function abs(x) { return x < 0 ? -x : x }
  NR == 1 { next }
  {
    for (c = 2; c <= 5; ++c) {
      a = $c; b = $(c + 6); tol = (c % 2 == 0) ? 1e-3 * abs(a) : 3e-3
      printf "epoch %d column %d: one process %.6f, %d processes %.6f\n", $1, c, a, ranks, b
      if (abs(a - b) > tol) bad = 1
    }
    ++epochs
  }
  END {
    if (epochs < 5) { print "expected 5 epochs, found " epochs + 0; exit 1 }
    if (bad) { print "the curves differ by more than the order of the sums explains"; exit 1 }
    print "curves agree"
  }'
