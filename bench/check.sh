#!/usr/bin/env bash
# Benchmark (not run in CI): `cellgen check` on 200 cells x 3 layers against the obvious
# alternative, `kubectl kustomize` once per cell and layer (600 runs, each layer with its
# components through a temporary overlay; no substitution, no contract check, so the
# alternative does less work).
#
#   bench/check.sh [CELLS]      (default 200; needs kubectl; uses hyperfine when installed;
#                                BENCH_KEEP=1 keeps the generated repository)
set -euo pipefail

CELLS=${1:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
command -v kubectl >/dev/null || { echo "kubectl is required" >&2; exit 1; }

echo "building cellgen (release)..." >&2
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
cellgen=$here/target/release/cellgen
# A first `new` names the role that administers the clusters (cellgen.yaml); builds from before
# that flag existed are still benchmarked without it.
first_cell_flags=()
if "$cellgen" new --help 2>/dev/null | grep -q -- --admin-role-arn; then
  first_cell_flags=(--admin-role-arn arn:aws:iam::123456789012:role/platform-admin)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cellgen-bench-XXXXXX")
if [[ -n ${BENCH_KEEP:-} ]]; then echo "keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
repo=$work/repo
mkdir -p "$repo"
export CELLGEN_NO_INPUT=1 GIT_CEILING_DIRECTORIES=$work

# A few cells by `cellgen new`, one per component mix; the rest are copies of these with the
# name rewritten (what `cellgen new` would write, minus the state under .cellgen/).
regions=(eu-west-1 eu-west-2 eu-central-1 us-east-1 us-east-2 us-west-2 ap-southeast-1 ap-southeast-2
  ap-northeast-1 sa-east-1 ca-central-1 eu-north-1)
envs=(dev staging prod)
mixes=("karpenter,kyverno,metrics-server" "karpenter,kyverno" "kyverno,metrics-server" "karpenter,metrics-server" "")
templates=()
start=$(date +%s.%N)
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
      # Each cell its own VPC block (check refuses overlapping ones): 10.<i>.0.0/16.
      sed -e "s/$tpl/$name/g" -e "s#\(vpc_cidr *= *\)\"[^\"]*\"#\1\"10.$i.0.0/16\"#" \
        "$f" >"$repo/$side/$name/$(basename "$f")"
    done
  done
done
echo "generated $CELLS cells in $(echo "$(date +%s.%N) - $start" | bc) s" >&2

"$cellgen" -C "$repo" check >"$work/check.out" || { cat "$work/check.out" >&2; echo "the generated repository does not check clean" >&2; exit 1; }
tail -1 "$work/check.out" >&2

# The alternative: one overlay per cell and layer (spec.path + spec.components), built by kubectl.
# Overlays live in the repository (kustomize refuses absolute resource paths): ../../ is its root.
overlays=$repo/.bench-overlays
mkdir -p "$overlays"
for cell in "$repo"/cells/*/; do
  cell=$(basename "$cell")
  for layer in "$repo/cells/$cell"/*.yaml; do
    [[ $(basename "$layer") == kustomization.yaml ]] && continue
    path=$(awk '/^  path:/ {print $2}' "$layer")
    path=${path#./}
    dir=$overlays/$cell-$(basename "$layer" .yaml)
    mkdir -p "$dir"
    {
      echo "resources: [../../$path]"
      echo "components:"
      awk '/^  components:/ {on=1; next} on && /^    - / {print $2; next} on {on=0}' "$layer" |
        while read -r c; do echo "  - ../../$(realpath -m --relative-to="$repo" "$repo/$path/$c")"; done
    } >"$dir/kustomization.yaml"
  done
done
count=$(ls "$overlays" | wc -l)
cat >"$work/kubectl-all.sh" <<EOF
#!/usr/bin/env bash
set -e
for d in "$overlays"/*/; do kubectl kustomize "\$d" >/dev/null; done
EOF
chmod +x "$work/kubectl-all.sh"

best_of_3() {
  local best="" t0 t1 t
  for _ in 1 2 3; do
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc)
    if [[ -z $best ]] || (($(echo "$t < $best" | bc))); then best=$t; fi
  done
  echo "$best"
}

if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs 10 --export-json "$work/check.json" "$cellgen -C $repo check" >&2
  hyperfine --runs 3 --export-json "$work/kubectl.json" "$work/kubectl-all.sh" >&2
  mean() { python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["mean"])' "$1"; }
  t_check=$(mean "$work/check.json")
  t_kubectl=$(mean "$work/kubectl.json")
  how="hyperfine mean"
else
  t_check=$(best_of_3 "$cellgen" -C "$repo" check)
  t_kubectl=$(best_of_3 "$work/kubectl-all.sh")
  how="best of 3, date +%s.%N"
fi

printf '\n%-48s %10s\n' "$CELLS cells x 3 layers ($how)" "seconds"
printf '%-48s %10.3f\n' "cellgen check (render + substitute + contract)" "$t_check"
printf '%-48s %10.3f\n' "kubectl kustomize x $count (build only)" "$t_kubectl"
printf '%-48s %9.0fx\n' "ratio" "$(echo "$t_kubectl / $t_check" | bc -l)"
