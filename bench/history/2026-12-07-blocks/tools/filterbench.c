/*
 * filterbench.c: ring_filter_buf's cost a record, in the cache: 256 KiB
 * of 128-byte samples (the storm's size) copied and walked 2,400 times,
 * less the copies alone.
 *   gcc -O2 -Idaemon/record -Icommon -o fb filterbench.c daemon/record/ring.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>
#include "ring.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(void){
	size_t len=256*1024, n=len/128, i; uint8_t *buf=malloc(len), *copy=malloc(len);
	for(i=0;i<n;i++){ struct perf_event_header h={PERF_RECORD_SAMPLE,0,128}; memcpy(buf+i*128,&h,8);
		uint32_t pid=1234; memcpy(buf+i*128+16,&pid,4); uint64_t t=1000+i; memcpy(buf+i*128+24,&t,8);}
	struct ring_counts c={0}; double t0=now(); size_t reps=2400;
	for(size_t r=0;r<reps;r++){ memcpy(copy,buf,len); struct ring_filter f={.pid=99,.pid_off=16,.time_off=24}; ring_filter_buf(copy,len,&c,&f);}
	double t=now()-t0; t0=now();
	for(size_t r=0;r<reps;r++){ memcpy(copy,buf,len); __asm__ volatile(""::"r"(copy):"memory");}
	double tc=now()-t0;
	printf("filter %.2f ns/record (copy+filter %.1f ms, copy %.1f ms) samples %llu\n",(t-tc)*1e9/(reps*n),t*1e3,tc*1e3,(unsigned long long)c.samples);
}
