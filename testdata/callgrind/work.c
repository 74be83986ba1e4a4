/* A small workload for callgrind (testdata/callgrind/README.md): recursion (fib), an inlined
   helper (square), qsort with a callback (cmp), malloc and free, and with an argument N up
   to 4 threads that sort too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

static inline int square(int x) { return x * x; }

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

long sum_squares(int n) {
	long s = 0;
	for (int i = 0; i < n; i++) s += square(i);
	return s;
}

static int cmp(const void *a, const void *b) {
	return *(const int *)a - *(const int *)b;
}

void sort_some(int n) {
	int *v = malloc(n * sizeof *v);
	for (int i = 0; i < n; i++) v[i] = (i * 7919) % n;
	qsort(v, n, sizeof *v, cmp);
	free(v);
}

static void *worker(void *arg) {
	long n = (long)arg;
	sort_some((int)n);
	return NULL;
}

int main(int argc, char **argv) {
	int threads = argc > 1 ? atoi(argv[1]) : 0;
	printf("%d %ld\n", fib(18), sum_squares(20000));
	sort_some(5000);
	pthread_t t[4];
	for (int i = 0; i < threads && i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)(long)(2000 * (i + 1)));
	for (int i = 0; i < threads && i < 4; i++) pthread_join(t[i], NULL);
	return 0;
}
