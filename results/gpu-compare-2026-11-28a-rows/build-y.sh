set -u
cd /work/wt/nvrows
G=/work/main/.gpu/nvrows; S=/work/wt/nvrows/build/stage; Y=/tmp/nvrows/benchy
NVCC=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc; L=$(dirname $NVCC)/../lib
X="-DRSHMEMI_X_BW=2 -DRSHMEMI_X_BT=true -DRSHMEMI_X_TW=4 -DRSHMEMI_X_TSMALL=128"
rm -rf $Y; mkdir -p $Y/y $G/build/cuda-y
# the stage's headers must be this tree's (rs_small_bytes)
# (build/stage holds this tree's headers)
nice make -s -C perftest/gpu NVCC=$NVCC LIB=rshmem RSHMEM_PREFIX=$S BUILD=$Y/y/rshmem OPT="-O3 -lineinfo $X" coll && echo coll-y
for t in coll_fresh coll; do
  nice $NVCC -arch=sm_90 -std=c++17 $X -I$S/include -Ictest/cuda ctest/cuda/$t.cu -o $G/build/cuda-y/$t -L$S/lib -lrshmem -Xlinker -rpath=$S/lib -L$L && echo test-$t
done
strip $Y/y/rshmem/* $G/build/cuda-y/*
(cd $Y && tar cf - y) | xz -T2 -3 > $G/benchy.tar.xz; du -sh $G; echo DONE
