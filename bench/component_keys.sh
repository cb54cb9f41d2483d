#!/usr/bin/env bash
# Benchmark (not run in CI): `add-component` and `remove-component` of a repository component with
# N keys, for a few N, to show how the time grows with the number of keys (it should be about
# linear: one edit pass per file, not one re-parse per key).
#
#   bench/component_keys.sh [N...]      (default: 100 1000 3000; BENCH_KEEP=1 keeps the repositories)
set -euo pipefail

sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(100 1000 3000)
here=$(cd "$(dirname "$0")/.." && pwd)

echo "building cellgen (release)..." >&2
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
cellgen=$here/target/release/cellgen
# A first `new` names the role that administers the clusters (cellgen.yaml); builds from before
# that flag existed are still benchmarked without it.
first_cell_flags=()
if "$cellgen" new --help 2>/dev/null | grep -q -- --admin-role-arn; then
  first_cell_flags=(--admin-role-arn arn:aws:iam::123456789012:role/platform-admin)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cellgen-bench-keys-XXXXXX")
if [[ -n ${BENCH_KEEP:-} ]]; then echo "keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export CELLGEN_NO_INPUT=1 GIT_CEILING_DIRECTORIES=$work

now() { date +%s.%N; }
printf '%8s  %10s  %10s\n' keys add_s remove_s
for n in "${sizes[@]}"; do
  repo=$work/repo-$n
  mkdir -p "$repo"
  "$cellgen" -C "$repo" new eu-west-2-prod --git-url ssh://git@github.com/acme/infra.git "${first_cell_flags[@]}" >/dev/null 2>&1
  dir=$repo/components/many-keys
  mkdir -p "$dir/apps"
  {
    echo "description: A component with $n keys"
    echo "layers: [apps]"
    echo "keys:"
    for ((i = 0; i < n; i++)); do
      echo "  many_key_$i:"
      echo "    description: Key number $i"
      echo "    example: value-$i"
      echo "    terraform: aws_iam_role.many_keys.arn"
    done
    echo "identity:"
    echo "  namespace: many"
    echo "  service_account: many"
    echo "  policy_arns: [arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess]"
  } >"$dir/component.yaml"
  printf 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: []\n' >"$dir/apps/kustomization.yaml"
  start=$(now)
  "$cellgen" -C "$repo" add-component many-keys >/dev/null
  mid=$(now)
  "$cellgen" -C "$repo" remove-component many-keys >/dev/null
  end=$(now)
  printf '%8d  %10.3f  %10.3f\n' "$n" "$(echo "$mid - $start" | bc)" "$(echo "$end - $mid" | bc)"
done
