/* Someone else's code: a shared object whose constructor leaves a mark
   ($XLNETC_TEST_MARK) when anything loads it (kernel-cache-trust.test). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void leave_mark(void) {
  const char *path = getenv("XLNETC_TEST_MARK");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (f)
    fclose(f);
}
