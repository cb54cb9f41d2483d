#!/usr/bin/env bash
# Benchmark (not run in CI): `cellgen diff` against `cellgen check` on the same repository of
# CELLS cells (generated as bench/check.sh does), committed, with one shared-layer line changed
# in the working tree. The issue's bound: diff costs at most about twice check (it renders the
# working tree, and at the base, read from Git, only what is not the same: see README "Cost:").
#
#   bench/diff.sh [CELLS]      (default 200; CELLGEN=path uses that binary instead of a release
#                               build; BENCH_KEEP=1 keeps the generated repository)
set -euo pipefail

CELLS=${1:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${CELLGEN:-} ]]; then
  echo "building cellgen (release)..." >&2
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  CELLGEN=$here/target/release/cellgen
fi
cellgen=$CELLGEN
# A first `new` names the role that administers the clusters (cellgen.yaml); builds from before
# that flag existed are still benchmarked without it.
first_cell_flags=()
if "$cellgen" new --help 2>/dev/null | grep -q -- --admin-role-arn; then
  first_cell_flags=(--admin-role-arn arn:aws:iam::123456789012:role/platform-admin)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cellgen-bench-diff-XXXXXX")
if [[ -n ${BENCH_KEEP:-} ]]; then echo "keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
repo=$work/repo
mkdir -p "$repo"
export CELLGEN_NO_INPUT=1 GIT_CEILING_DIRECTORIES=$work
git -C "$repo" init -q -b main

regions=(eu-west-1 eu-west-2 eu-central-1 us-east-1 us-east-2 us-west-2 ap-southeast-1 ap-southeast-2
  ap-northeast-1 sa-east-1 ca-central-1 eu-north-1)
envs=(dev staging prod)
mixes=("karpenter,kyverno,metrics-server" "karpenter,kyverno" "kyverno,metrics-server" "karpenter,metrics-server" "")
templates=()
for i in "${!mixes[@]}"; do
  name="${regions[$i]}-${envs[$((i % 3))]}"
  args=(new "$name")
  [[ $i == 0 ]] && args+=(--git-url ssh://git@github.com/acme/infra.git "${first_cell_flags[@]}")
  [[ -n ${mixes[$i]} ]] && args+=(--components "${mixes[$i]}")
  "$cellgen" -C "$repo" "${args[@]}" >/dev/null
  templates+=("$name")
done
n=${#templates[@]}
for ((i = n; i < CELLS; i++)); do
  tpl=${templates[$((i % n))]}
  name="${regions[$((i % ${#regions[@]}))]}-${envs[$((i % 3))]}$i"
  for side in cells terraform/cells; do
    mkdir -p "$repo/$side/$name"
    for f in "$repo/$side/$tpl"/*; do
      sed -e "s/$tpl/$name/g" -e "s#\(vpc_cidr *= *\)\"[^\"]*\"#\1\"10.$i.0.0/16\"#" \
        "$f" >"$repo/$side/$name/$(basename "$f")"
    done
  done
done
git -C "$repo" add -A
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m cells
# One shared-layer change: every cell is affected.
sed -i 's/^metadata:$/metadata:\n  annotations:\n    team: core/' "$repo/infrastructure/controllers/platform-namespace.yaml"

best_of_3() {
  local best="" t0 t1 t
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$@" >/dev/null || true
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc)
    if [[ -z $best ]] || (($(echo "$t < $best" | bc))); then best=$t; fi
  done
  echo "$best"
}

"$cellgen" -C "$repo" diff | sed -n 2p >&2
t_check=$(best_of_3 "$cellgen" -C "$repo" check)
t_diff=$(best_of_3 "$cellgen" -C "$repo" diff)
printf '\n%-48s %10s\n' "$CELLS cells x 3 layers (best of 3)" "seconds"
printf '%-48s %10.3f\n' "cellgen check" "$t_check"
printf '%-48s %10.3f\n' "cellgen diff (base from Git + working tree)" "$t_diff"
printf '%-48s %9.2fx\n' "diff / check" "$(echo "$t_diff / $t_check" | bc -l)"
