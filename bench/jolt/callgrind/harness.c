/*
 * Runs wasm/shift.c natively on a dump of the WebAssembly module's memory (see
 * bench/jolt/shift_instructions.ts), so that valgrind can count its instructions: a count does
 * not move with the machine's load the way timings do.
 *
 *   harness DIR ITERATIONS   (DIR holds memory.bin, args.txt and expected.json)
 *
 * The module's addresses are offsets into its memory; here that memory is mapped at BASE, below
 * 4 GiB, so that shift.c's 32-bit pointer arithmetic holds. BASE + memory stays under shift.c's
 * MEMORY_LIMIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BASE 0x8000000UL
#define SIZE (64UL << 20)
static unsigned long pages; /* the top of "memory", in 64 KiB pages from address 0 */
#define __builtin_wasm_memory_size(x) (pages)
#define __builtin_wasm_memory_grow(x, n) \
  (pages + (n) <= (BASE + SIZE) / 65536 ? (pages += (n), pages - (n)) : (unsigned long)-1)
#include "../../../shared/jolt/wasm/shift.c"

static long slurp(const char *dir, const char *name, void *into, long max) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  long n = (long)fread(into, 1, max, f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: harness DIR ITERATIONS\n");
    return 2;
  }
  int iterations = atoi(argv[2]);
  u8 *memory = mmap((void *)BASE, SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (memory == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  long n = slurp(argv[1], "memory.bin", memory, SIZE);
  pages = (BASE + n) / 65536;
  char text[256] = {0};
  slurp(argv[1], "args.txt", text, sizeof text - 1);
  unsigned a[6];
  if (sscanf(text, "%u %u %u %u %u %u", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]) != 6) {
    fprintf(stderr, "args.txt: six numbers expected\n");
    return 1;
  }
  i32 length = 0;
  for (int i = 0; i < iterations; i++) {
    length = shift_run(BASE + a[0], BASE + a[1], BASE + a[2], BASE + a[3], BASE + a[4], BASE + a[5]);
  }
  static char expected[64 << 20];
  long e = slurp(argv[1], "expected.json", expected, sizeof expected);
  int same = length == e && memcmp(expected, (void *)(unsigned long)output_at(), e) == 0;
  printf("output %d bytes, %s\n", length, same ? "as in WebAssembly" : "DIFFERENT from WebAssembly");
  return same ? 0 : 1;
}
