/* fiload: how long loading libfabric and its first fi_getinfo take (session 16, issue 18 init profile).
 * cc -O2 fiload.c -o fiload -ldl */
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  double t0=now(); void*h=dlopen("libfabric.so.1",RTLD_NOW); double t1=now();
  int (*gi)(uint32_t,const char*,const char*,uint64_t,const void*,void**)=dlsym(h,"fi_getinfo");
  void (*fi)(void*)=dlsym(h,"fi_freeinfo"); void*info=0;
  int rc=gi((1<<16)|11,0,0,0,0,&info); double t2=now(); if(!rc) fi(info);
  printf("dlopen %.1f ms, first fi_getinfo %.1f ms\n",(t1-t0)*1e3,(t2-t1)*1e3); return 0;}
