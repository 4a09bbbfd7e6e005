#!/usr/bin/env bash
# A race-regression run as a Slurm job array of 4 tasks, then a dependent merge job:
#   jobid=$(sbatch --parsable docs/examples/slurm-array.sh)
#   sbatch --dependency=afterany:$jobid --wrap "racelab merge results/shard-0 results/shard-1 results/shard-2 results/shard-3 --out results/merged --junit results/merged/junit.xml"
#SBATCH --job-name=race-regression
#SBATCH --array=0-3
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
set -euo pipefail
mkdir -p results
srun racelab suite scenarios --jobs $SLURM_CPUS_PER_TASK --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT --out results/shard-$SLURM_ARRAY_TASK_ID
