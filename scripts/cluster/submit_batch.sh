#!/bin/bash
# Submits a whole tilebank batch to Slurm (docs/BATCH.md): for each soc_version of the plan, one
# array of its shards on that soc_version's nodes, then the merge once every array has ended.
#   submit_batch.sh PLAN.json BANK_ROOT [SOC_VERSION=SBATCH_OPTION ...] [-- OPTIONS FOR EVERY JOB]
# SBATCH_OPTION picks a soc_version's nodes, e.g. x86_64-amd-zen4-64c=--partition=zen4; without
# one it is --constraint=<soc_version> (a node feature named after the soc_version). Options after
# -- go to every sbatch (--account, --chdir, ...). TILEBANK names the binary (default: tilebank on
# PATH). Prints each job's id; exits 2 on a bad plan or argument, with sbatch's status if it fails.
set -euo pipefail
usage="usage: submit_batch.sh PLAN.json BANK_ROOT [SOC_VERSION=SBATCH_OPTION ...] [-- SBATCH OPTIONS]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
here=$(dirname "$(readlink -f "$0")")
plan=$1 bank_root=$2
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
groups=$("$tilebank" batch groups "$plan") || exit 2  # the plan's soc_versions and their shards; a bad plan is named
for soc in "${!select[@]}"; do
  grep -q "^$soc " <<<"$groups" || { echo "submit_batch.sh: $soc=${select[$soc]}: the plan does not tune soc_version $soc" >&2; exit 2; }
done
arrays=()
while read -r soc range; do
  option=${select[$soc]:---constraint=$soc}
  id=$(sbatch --parsable --array="$range" "$option" "${every[@]}" "$here/tune_array.sbatch" "$plan" "$bank_root")
  echo "soc_version $soc: shards $range, array job ${id%%;*} ($option)"
  arrays+=("${id%%;*}")
done <<<"$groups"
after=$(IFS=:; echo "${arrays[*]}")
id=$(sbatch --parsable --dependency="afterany:$after" "${every[@]}" "$here/merge.sbatch" "$plan" "$bank_root")
echo "merge job ${id%%;*} (after every array has ended)"
