#!/usr/bin/env bash
# Benchmark (not run in CI): `cellgen check` on 1,000 cells x 3 layers with components, next to
#   (a) merely reading every input file check reads (the files `check` opens, listed once with
#       strace, then read by a separate program: examples/read_inputs.rs),
#   (b) `cellgen check` itself, wall and CPU (user+sys) per cell,
#   (c) `kubectl kustomize` per layer, on a sample of layers (each layer with its components
#       through a temporary overlay; build only, no substitution),
# and check's CPU at 250, 500 and 1,000 cells, to show it grows linearly. Whole-process figures
# from /usr/bin/time, median of RUNS runs. Prints numbers; asserts nothing.
#
#   bench/check-1000.sh [CELLS]   (default 1000; RUNS=3, SAMPLE=30 kubectl layers, SIZES="250 500",
#                                  BENCH_KEEP=1 keeps the repositories, BENCH_REPO=DIR reuses one
#                                  kept; needs kubectl and strace)
set -euo pipefail

CELLS=${1:-1000}
RUNS=${RUNS:-3}
SAMPLE=${SAMPLE:-30}
SIZES=${SIZES-250 500}
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in kubectl strace /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done

echo "building cellgen and the reader (release)..." >&2
cargo build --release --quiet --manifest-path "$here/Cargo.toml" --bin cellgen --example read_inputs
cellgen=$here/target/release/cellgen
# A first `new` names the role that administers the clusters (cellgen.yaml); builds from before
# that flag existed are still benchmarked without it.
first_cell_flags=()
if "$cellgen" new --help 2>/dev/null | grep -q -- --admin-role-arn; then
  first_cell_flags=(--admin-role-arn arn:aws:iam::123456789012:role/platform-admin)
fi
reader=$here/target/release/examples/read_inputs

work=$(mktemp -d "${TMPDIR:-/tmp}/cellgen-bench-XXXXXX")
if [[ -n ${BENCH_KEEP:-} ]]; then echo "keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
export CELLGEN_NO_INPUT=1 GIT_CEILING_DIRECTORIES=$work

# A repository of $2 cells at $1: a few cells by `cellgen new`, one per component mix; the rest
# copies of these with the name rewritten (what `cellgen new` writes, minus .cellgen/ state).
generate() {
  local repo=$1 cells=$2
  local regions=(eu-west-1 eu-west-2 eu-central-1 us-east-1 us-east-2 us-west-2 ap-southeast-1
    ap-southeast-2 ap-northeast-1 sa-east-1 ca-central-1 eu-north-1)
  local envs=(dev staging prod)
  local mixes=("karpenter,kyverno,metrics-server" "karpenter,kyverno" "kyverno,metrics-server"
    "karpenter,metrics-server" "")
  local templates=() i name tpl side f
  mkdir -p "$repo"
  for i in "${!mixes[@]}"; do
    name="${regions[$i]}-${envs[$((i % 3))]}"
    local args=(new "$name")
    [[ $i == 0 ]] && args+=(--git-url ssh://git@github.com/acme/infra.git "${first_cell_flags[@]}")
    [[ -n ${mixes[$i]} ]] && args+=(--components "${mixes[$i]}")
    "$cellgen" -C "$repo" "${args[@]}" >/dev/null
    templates+=("$name")
  done
  local n=${#templates[@]}
  for ((i = n; i < cells; i++)); do
    tpl=${templates[$((i % n))]}
    name="${regions[$((i % ${#regions[@]}))]}-${envs[$((i % 3))]}$i"
    for side in cells terraform/cells; do
      mkdir -p "$repo/$side/$name"
      for f in "$repo/$side/$tpl"/*; do
        # Each cell its own VPC block (check refuses overlapping ones): a /20 above the /16s `cellgen new` gave.
        sed -e "s/$tpl/$name/g" \
          -e "s#\(vpc_cidr *= *\)\"[^\"]*\"#\1\"10.$((16 + i / 16)).$(((i % 16) * 16)).0/20\"#" \
          "$f" >"$repo/$side/$name/$(basename "$f")"
      done
    done
  done
}

# Median of $RUNS runs of a command: "wall cpu" in seconds (cpu = user + sys).
timed() {
  local out=$work/time.txt i
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -f '%e %U %S' -o "$out" "$@" >/dev/null 2>&1 || true
    awk '{printf "%s %.3f\n", $1, $2 + $3}' "$out"
  done | sort -k2 -n | awk -v n="$RUNS" 'NR == int((n + 1) / 2)'
}

if [[ -n ${BENCH_REPO:-} ]]; then
  repo=$BENCH_REPO # one generated before (BENCH_KEEP=1), with $CELLS cells
  rm -rf "$repo/.bench-overlays"
else
  repo=$work/repo-$CELLS
  start=$(date +%s.%N)
  generate "$repo" "$CELLS"
  echo "generated $CELLS cells in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
fi
"$cellgen" -C "$repo" check >"$work/check.out" ||
  { tail -5 "$work/check.out" >&2; echo "the generated repository does not check clean" >&2; exit 1; }
tail -1 "$work/check.out" >&2
layers=$(find "$repo/cells" -mindepth 2 -name '*.yaml' ! -name kustomization.yaml | wc -l)

# (a) The files check opens (regular files of the repository), in the order it opens them.
strace -f -qq -e trace=openat -o "$work/trace" "$cellgen" -C "$repo" check >/dev/null || true
grep -v ' = -1 ' "$work/trace" | sed -n 's/.*openat([^"]*"\([^"]*\)".*/\1/p' |
  while read -r p; do
    [[ $p == /* ]] || p=$repo/$p
    # `if`, not `&&`: a last path that is a directory (the store opens those too) must not end
    # the loop with a failing status under `set -e`.
    if [[ $p == "$repo"/* && -f $p ]]; then echo "$p"; fi
  done >"$work/opened"
awk '!seen[$0]++' "$work/opened" >"$work/inputs" # each file once: the floor, not check's repeats
files=$(wc -l <"$work/inputs")
opens=$(wc -l <"$work/opened") # check opens each once (filestore): the two are equal
bytes=$("$reader" "$work/inputs")

read -r read_wall read_cpu < <(timed "$reader" "$work/inputs")
read -r check_wall check_cpu < <(timed "$cellgen" -C "$repo" check)

# check / reading, run by run: the two alternate, and the median of the pairs' ratios is taken
# (a shared machine's speed drifts between two series of runs; within a pair much less).
paired() {
  local out=$work/time.txt i r c
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -f '%e %U %S' -o "$out" "$reader" "$work/inputs" >/dev/null 2>&1 || true
    r=$(awk '{printf "%s %.3f", $1, $2 + $3}' "$out")
    /usr/bin/time -f '%e %U %S' -o "$out" "$cellgen" -C "$repo" check >/dev/null 2>&1 || true
    c=$(awk '{printf "%s %.3f", $1, $2 + $3}' "$out")
    echo "$r $c"
  done | awk '{printf "%.4f %.4f\n", ($4 / $2), ($3 / $1)}' >"$work/pairs"
  local mid=$(((RUNS + 1) / 2))
  echo "$(sort -n -k1 "$work/pairs" | awk -v m="$mid" 'NR == m {print $1}')" \
    "$(sort -n -k2 "$work/pairs" | awk -v m="$mid" 'NR == m {print $2}')"
}
read -r pair_cpu pair_wall < <(paired)

# (c) kubectl kustomize on a sample of layers: one overlay per layer (spec.path +
# spec.components), inside the repository (kustomize refuses absolute resource paths).
overlays=$repo/.bench-overlays
mkdir -p "$overlays"
find "$repo/cells" -mindepth 2 -name '*.yaml' ! -name kustomization.yaml | sort | sed -n "1,${SAMPLE}p" |
  while read -r layer; do
    path=$(awk '/^  path:/ {print $2}' "$layer")
    path=${path#./}
    dir=$overlays/$(basename "$(dirname "$layer")")-$(basename "$layer" .yaml)
    mkdir -p "$dir"
    {
      echo "resources: [../../$path]"
      echo "components:"
      awk '/^  components:/ {on=1; next} on && /^    - / {print $2; next} on {on=0}' "$layer" |
        while read -r c; do echo "  - ../../$(realpath -m --relative-to="$repo" "$repo/$path/$c")"; done
    } >"$dir/kustomization.yaml"
  done
sampled=$(find "$overlays" -mindepth 1 -maxdepth 1 -type d | wc -l)
cat >"$work/kubectl-sample.sh" <<SH
#!/usr/bin/env bash
set -e
for d in "$overlays"/*/; do kubectl kustomize "\$d" >/dev/null; done
SH
chmod +x "$work/kubectl-sample.sh"
read -r kubectl_wall kubectl_cpu < <(timed "$work/kubectl-sample.sh")
rm -rf "$overlays"

ms() { echo "$1 * 1000 / $2" | bc -l; }
printf '\n%d cells x %d layers (%d layers in all); medians of %d runs, whole processes\n' \
  "$CELLS" "$((layers / CELLS))" "$layers" "$RUNS"
printf '%-52s %9s %9s %12s %12s\n' "" "wall s" "cpu s" "cpu ms/cell" "cpu ms/layer"
row() { printf '%-52s %9.3f %9.3f %12.3f %12.3f\n' "$1" "$2" "$3" "$(ms "$3" "$CELLS")" "$(ms "$3" "$layers")"; }
row "(a) read the $files input files ($bytes bytes)" "$read_wall" "$read_cpu"
printf '%-52s %9d\n' "    opens of those files by check" "$opens"
row "(b) cellgen check" "$check_wall" "$check_cpu"
printf '%-52s %9.3f %9.3f %12s %12.3f\n' "(c) kubectl kustomize, $sampled layers" "$kubectl_wall" \
  "$kubectl_cpu" "" "$(ms "$kubectl_cpu" "$sampled")"
printf '%-52s %9.1fx\n' "check cpu / reading cpu" "$(echo "$check_cpu / $read_cpu" | bc -l)"
printf '%-52s %9.1fx %9.1fx\n' "  the same, alternating (median of pairs: cpu, wall)" "$pair_cpu" "$pair_wall"
printf '%-52s %9.1fx\n' "check cpu / check wall (cores used)" "$(echo "$check_cpu / $check_wall" | bc -l)"
printf '%-52s %9.0fx\n' "kubectl cpu per layer / check cpu per layer" \
  "$(echo "($kubectl_cpu / $sampled) / ($check_cpu / $layers)" | bc -l)"

# Linearity: check at smaller sizes.
if [[ -n $SIZES ]]; then
  printf '\n%-12s %9s %9s %12s\n' cells "wall s" "cpu s" "cpu ms/cell"
  for n in $SIZES; do
    small=$work/repo-$n
    generate "$small" "$n" 2>/dev/null
    read -r w c < <(timed "$cellgen" -C "$small" check)
    printf '%-12s %9.3f %9.3f %12.3f\n' "$n" "$w" "$c" "$(ms "$c" "$n")"
    [[ -n ${BENCH_KEEP:-} ]] || rm -rf "$small"
  done
  printf '%-12s %9.3f %9.3f %12.3f\n' "$CELLS" "$check_wall" "$check_cpu" "$(ms "$check_cpu" "$CELLS")"
fi
