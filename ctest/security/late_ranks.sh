#!/bin/sh
# Starts every rank but 0 a moment late (rank from hydra's PMI_RANK or Open MPI's
# OMPI_COMM_WORLD_RANK), so that rank 0's rendezvous waits for them and the attackers, already
# scanning, meet it open: their refusals are then in the job's log to be checked.
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}
[ "$rank" = 0 ] || sleep "${LATE_RANKS_DELAY:-1.5}"
exec "$@"
