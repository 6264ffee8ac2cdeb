// An OpenBLAS that picks its Prescott kernels by itself, as Debian's 0.3.21
// does on a CPU model it does not know, but honours OPENBLAS_CORETYPE:
// preloaded (LD_PRELOAD) over the real library by gemm-kernels-rerun.test,
// it answers openblas_get_corename and openblas_get_config for it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

static char *real(const char *name) {
  char *(*f)(void) = (char *(*)(void))dlsym(RTLD_NEXT, name);
  return f ? f() : (char *)"";
}

char *openblas_get_corename(void) {
  return getenv("OPENBLAS_CORETYPE") ? real("openblas_get_corename") : (char *)"Prescott";
}

char *openblas_get_config(void) {
  return getenv("OPENBLAS_CORETYPE") ? real("openblas_get_config")
                                     : (char *)"OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Prescott";
}
