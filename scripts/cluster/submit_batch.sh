#!/bin/bash
# Submits a whole tilebank batch to Slurm (docs/BATCH.md): for each soc_version of the plan, one
# array of its shards on that soc_version's nodes, then the merge once every array has ended.
#   submit_batch.sh PLAN.json BANK_ROOT [SOC_VERSION=SBATCH_OPTION ...] [-- OPTIONS FOR EVERY JOB]
# SBATCH_OPTION picks a soc_version's nodes, e.g. x86_64-amd-zen4-64c=--partition=zen4; without
# one it is --constraint=<soc_version> (a node feature named after the soc_version), or nothing for
# a plan of gradient problems (-j 4), which any node plans. Options after
# -- go to every sbatch (--account, --chdir, ...). Each array is numbered from 0 (Slurm's
# MaxArraySize bounds an index, not the shard), and tune_array.sbatch adds the group's first shard.
# TILEBANK names the binary (default: tilebank on PATH). Prints each job's id; exits 2 on a bad
# plan or argument; when sbatch fails, cancels the arrays it submitted and exits with its status.
set -euo pipefail
usage="usage: submit_batch.sh PLAN.json BANK_ROOT [SOC_VERSION=SBATCH_OPTION ...] [-- SBATCH OPTIONS]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
here=$(dirname "$(readlink -f "$0")")
# Absolute, so that --chdir among the options does not move them.
plan=$(readlink -m "$1") bank_root=$(readlink -m "$2")
shift 2
declare -A select=()
every=()
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; every=("$@"); break ;;
    ?*=?*) select[${1%%=*}]=${1#*=}; shift ;;
    *) echo "submit_batch.sh: $1: expected SOC_VERSION=SBATCH_OPTION, or -- before options for every job" >&2; exit 2 ;;
  esac
done
tilebank=${TILEBANK:-tilebank}
groups=$("$tilebank" batch groups "$plan") || exit 2  # "SOC_VERSION FIRST-LAST [anywhere]" a line; a bad plan is named
for soc in "${!select[@]}"; do
  awk -v soc="$soc" '$1 == soc { found = 1 } END { exit !found }' <<<"$groups" ||
    { echo "submit_batch.sh: $soc=${select[$soc]}: the plan does not tune soc_version $soc" >&2; exit 2; }
done
arrays=()
cancel() { [ ${#arrays[@]} -eq 0 ] || scancel "${arrays[@]}" || true; }
while read -r soc range where; do
  first=${range%-*} last=${range#*-}
  if [ -n "${select[$soc]:-}" ]; then option=(${select[$soc]})
  elif [ "$where" = anywhere ]; then option=()
  else option=("--constraint=$soc"); fi
  id=$(sbatch --parsable --array="0-$((last - first))" ${option[@]+"${option[@]}"} ${every[@]+"${every[@]}"} \
    "$here/tune_array.sbatch" "$plan" "$bank_root" "$first") || { status=$?; cancel; exit $status; }
  echo "soc_version $soc: shards $range, array job ${id%%;*} (${option[*]:-any node})"
  arrays+=("${id%%;*}")
done <<<"$groups"
after=$(IFS=:; echo "${arrays[*]}")
id=$(sbatch --parsable --dependency="afterany:$after" ${every[@]+"${every[@]}"} "$here/merge.sbatch" "$plan" "$bank_root") ||
  { status=$?; cancel; exit $status; }
echo "merge job ${id%%;*} (after every array has ended)"
