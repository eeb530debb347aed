/* barr2: barrier_all timed in batches (session 16, issue 18). usage: barr2 [BATCHES [PER]]; prints the
 * min, 10th, 25th and 50th percentile of the per-barrier time over BATCHES batches of PER barriers, so a
 * loaded machine's stalls show in the upper percentiles and the low ones compare builds. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(int argc,char**argv){
  int nb = argc>1?atoi(argv[1]):400, per=argc>2?atoi(argv[2]):25;
  double *t=malloc(sizeof(double)*nb);
  shmem_init();
  for(int i=0;i<200;i++) shmem_barrier_all();
  for(int b=0;b<nb;b++){ double t0=now(); for(int i=0;i<per;i++) shmem_barrier_all(); t[b]=(now()-t0)/per*1e6; }
  qsort(t,nb,sizeof(double),cmp);
  if(shmem_my_pe()==0) printf("min %.2f p10 %.2f p25 %.2f p50 %.2f us\n", t[0], t[nb/10], t[nb/4], t[nb/2]);
  shmem_finalize(); return 0;}
