# Sourced by ctest scripts: path_without DIR prints $PATH without the entries that are DIR
# (compared after resolving, so build/ctest/../stage/bin matches build/stage/bin). The install's
# bin holds rshmem's oshcc/oshrun, which must not shadow Open MPI's in the tests that want those.
path_without() {
    local dir entry out=""
    dir=$(realpath -m "$1")
    local IFS=:
    for entry in $PATH; do
        [ "$(realpath -m "${entry:-.}")" = "$dir" ] && continue
        out=${out:+$out:}$entry
    done
    echo "$out"
}
