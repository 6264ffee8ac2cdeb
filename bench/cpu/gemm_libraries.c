// The sgemm rate of one BLAS, loaded with dlopen, at the host executor's
// shapes: scripts/gemm_libraries.sh runs it once per library and setting
// (docs/Training.md, "GEMM kernels").
//
// usage: gemm_libraries KIND LIBRARY   (KIND: openblas, scipy-openblas, blis, onednn)
// Threads: GB_THREADS (default 2). Prints one row: the library's own
// threading on 1024^3, then the host executor's way (OpenMP splits the rows,
// or the columns when there are more of them, one single-threaded sgemm per
// thread, as blockedSgemm) on 1024^3 and on xlnet-small's
// shapes: the FFN (1024x1024x256, 1024x256x1024) and the LM head
// (160x8000x256). Each rate is the best of at least 5 timings over at least
// 0.5 s after a warm-up; each result
// is checked against a double-precision row (a wrong library exits 1).
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*cblas_sgemm_t)(int, int, int, int, int, int, float, const float *, int,
                              const float *, int, float, float *, int);
typedef int (*dnnl_sgemm_t)(char, char, long, long, long, float, const float *, long,
                            const float *, long, float, float *, long);
static cblas_sgemm_t cblas;
static dnnl_sgemm_t dnnl;

static void sgemm(int m, int n, int k, int lda, int ldb, int ldc, const float *a,
                  const float *b, float *c) {
  if (cblas)
    cblas(101 /*row major*/, 111, 111, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
  else
    dnnl('N', 'N', m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double rate(int m, int n, int k, int split, int threads) {
  float *a = malloc(4L * m * k), *b = malloc(4L * k * n), *c = malloc(4L * m * n);
  for (long i = 0; i < (long)m * k; i++) a[i] = ((i * 7) % 13 - 6) * 0.1f;
  for (long i = 0; i < (long)k * n; i++) b[i] = ((i * 5) % 11 - 5) * 0.2f;
  // The best of at least 5 timings over at least 0.5 s, after a warm-up: a
  // shared VM's neighbours take a core away for tens of milliseconds.
  double best = 1e30, start = now();
  for (int rep = 0; rep < 6 || now() - start < 0.5; rep++) {
    double t = now();
    if (split) {
#pragma omp parallel num_threads(threads)
      {
        // As blockedSgemm (runtime/host/Kernels.cpp): rows when n <= m,
        // else columns.
        int id = omp_get_thread_num(), nt = omp_get_num_threads();
        if (n <= m) {
          int m0 = m * id / nt, m1 = m * (id + 1) / nt;
          sgemm(m1 - m0, n, k, k, n, n, a + (long)m0 * k, b, c + (long)m0 * n);
        } else {
          int n0 = n * id / nt, n1 = n * (id + 1) / nt;
          sgemm(m, n1 - n0, k, k, n, n, a, b + n0, c + n0);
        }
      }
    } else {
      sgemm(m, n, k, k, n, n, a, b, c);
    }
    t = now() - t;
    if (rep > 0 && t < best) best = t;
  }
  double err = 0;
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int p = 0; p < k; p++) s += (double)a[(long)(m / 2) * k + p] * b[(long)p * n + j];
    double e = fabs(s - c[(long)(m / 2) * n + j]) / (1 + fabs(s));
    if (e > err) err = e;
  }
  if (err > 1e-4) {
    fprintf(stderr, "gemm_libraries: wrong result: relative error %g\n", err);
    exit(1);
  }
  free(a), free(b), free(c);
  return 2.0 * m * n * k / best / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gemm_libraries KIND LIBRARY\n");
    return 2;
  }
  const char *kind = argv[1];
  const char *env = getenv("GB_THREADS");
  int threads = env ? atoi(env) : 2;
  void *lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "gemm_libraries: %s\n", dlerror());
    return 1;
  }
  const char *kernels = "?";
  void (*setThreads)(int) = NULL;
  if (!strcmp(kind, "openblas") || !strcmp(kind, "scipy-openblas")) {
    const char *prefix = !strcmp(kind, "scipy-openblas") ? "scipy_" : "";
    char name[64];
    snprintf(name, sizeof name, "%scblas_sgemm", prefix);
    cblas = (cblas_sgemm_t)dlsym(lib, name);
    snprintf(name, sizeof name, "%sopenblas_get_corename", prefix);
    char *(*core)(void) = (char *(*)(void))dlsym(lib, name);
    kernels = core ? core() : "?";
    snprintf(name, sizeof name, "%sopenblas_set_num_threads", prefix);
    setThreads = (void (*)(int))dlsym(lib, name);
  } else if (!strcmp(kind, "blis")) {
    cblas = (cblas_sgemm_t)dlsym(lib, "cblas_sgemm");
    setThreads = (void (*)(int))dlsym(lib, "bli_thread_set_num_threads");
    int (*archId)(void) = (int (*)(void))dlsym(lib, "bli_arch_query_id");
    const char *(*archName)(int) = (const char *(*)(int))dlsym(lib, "bli_arch_string");
    if (archId && archName) kernels = archName(archId());
  } else if (!strcmp(kind, "onednn")) {
    dnnl = (dnnl_sgemm_t)dlsym(lib, "dnnl_sgemm");
    kernels = getenv("ONEDNN_MAX_CPU_ISA") ? getenv("ONEDNN_MAX_CPU_ISA") : "dispatch";
  }
  if (!cblas && !dnnl) {
    fprintf(stderr, "gemm_libraries: no sgemm in %s\n", argv[2]);
    return 1;
  }
  if (setThreads) setThreads(threads);
  omp_set_num_threads(threads);
  double own = rate(1024, 1024, 1024, 0, threads);
  if (setThreads) setThreads(1);
  // oneDNN inside an OpenMP region runs on that thread alone.
  printf("%-15s %-12s %8.1f %8.1f %8.1f %8.1f %8.1f\n", kind, kernels, own,
         rate(1024, 1024, 1024, 1, threads), rate(1024, 1024, 256, 1, threads),
         rate(1024, 256, 1024, 1, threads), rate(160, 8000, 256, 1, threads));
  return 0;
}
