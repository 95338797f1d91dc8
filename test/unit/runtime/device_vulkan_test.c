//===- device_vulkan_test.c - The Vulkan device layer on a real driver ----===//
//
// Runs mlcc/device.h against whatever Vulkan device is there; CTest points
// the loader at lavapipe (Mesa's CPU driver) and turns the validation layer
// on. Exit 0: every case passed; 77: no device (skipped, with the reason
// printed, so a machine without Vulkan never passes silently); 1: failures.
//
// The kernels are SPIR-V assembly in shaders/, assembled by the build into
// MLCC_TEST_SHADER_DIR; reduce_racy.spv is reduce.spvasm without its
// barriers, which the reduction case needs to give wrong sums (a test that
// could not fail would prove nothing about the barriers).
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L // setenv, unsetenv

#include <mlcc/device.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLCC_TEST_SHADER_DIR
#error "MLCC_TEST_SHADER_DIR must name the directory of the assembled shaders"
#endif

static int Failures = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      ++Failures;                                                              \
    }                                                                          \
  } while (0)

// A status that must be MLCC_OK; the message says what failed.
#define CHECK_OK(call)                                                         \
  do {                                                                         \
    mlcc_status checkStatus = (call);                                          \
    CHECK(checkStatus == MLCC_OK, "%s: %s", mlcc_status_string(checkStatus),   \
          mlcc_last_error_message());                                          \
  } while (0)

// A status that must be `expected`, with a message; prints the message.
static void expectFailure(mlcc_status status, mlcc_status expected,
                          const char *what) {
  const char *message = mlcc_last_error_message();
  printf("  %s -> %s: %s\n", what, mlcc_status_string(status), message);
  CHECK(status == expected, "%s: expected %s, got %s", what,
        mlcc_status_string(expected), mlcc_status_string(status));
  CHECK(message[0] != '\0', "%s: no message", what);
}

// The words of an assembled shader, or NULL (a failure is counted).
static uint32_t *loadShader(const char *name, uint64_t *bytes) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s.spv", MLCC_TEST_SHADER_DIR, name);
  FILE *file = fopen(path, "rb");
  CHECK(file != NULL, "cannot open %s", path);
  if (!file)
    return NULL;
  uint32_t *words = NULL;
  long size = -1;
  if (fseek(file, 0, SEEK_END) == 0)
    size = ftell(file);
  if (size > 0 && size % 4 == 0 && fseek(file, 0, SEEK_SET) == 0) {
    words = malloc((size_t)size);
    if (words && fread(words, 1, (size_t)size, file) != (size_t)size) {
      free(words);
      words = NULL;
    }
  }
  fclose(file);
  CHECK(words != NULL, "cannot read %s (%ld bytes)", path, size);
  *bytes = words ? (uint64_t)size : 0;
  return words;
}

static mlcc_device_kernel *makeKernel(mlcc_device *device, const char *file,
                                      const char *name, uint32_t numBuffers,
                                      uint32_t workgroupSize) {
  uint64_t bytes = 0;
  uint32_t *code = loadShader(file, &bytes);
  if (!code)
    return NULL;
  mlcc_device_kernel_desc desc = {
      .name = name,
      .code = code,
      .code_bytes = bytes,
      .num_buffers = numBuffers,
      .workgroup_size = {workgroupSize, 1, 1},
  };
  mlcc_device_kernel *kernel = NULL;
  CHECK_OK(mlcc_device_kernel_create(device, &desc, &kernel));
  free(code); // the pipeline does not need the words any more
  return kernel;
}

static mlcc_device_buffer *makeBuffer(mlcc_device *device, uint64_t bytes) {
  mlcc_device_buffer *buffer = NULL;
  CHECK_OK(mlcc_device_buffer_create(device, bytes, &buffer));
  return buffer;
}

//===-- 2. vadd, at aligned offsets, chained, and ordered with writes -----===//

enum { VaddN = 1000, VaddSlots = 1024 }; // 16 workgroups of 64

static void testVadd(mlcc_device *device, mlcc_device_kernel *vadd) {
  printf("vadd over %d elements\n", VaddN);
  const uint64_t align = mlcc_device_offset_alignment(device);
  // a, b and c each start at a different nonzero multiple of the alignment.
  const uint64_t offA = align, offB = 2 * align, offC = 3 * align;
  const uint64_t bytes = offC + VaddSlots * sizeof(float);
  mlcc_device_buffer *bufA = makeBuffer(device, bytes);
  mlcc_device_buffer *bufB = makeBuffer(device, bytes);
  mlcc_device_buffer *bufC = makeBuffer(device, bytes);
  mlcc_device_buffer *bufD = makeBuffer(device, VaddSlots * sizeof(float));
  if (!bufA || !bufB || !bufC || !bufD)
    goto done;

  static float a[VaddN], b[VaddN], a2[VaddN], c[VaddSlots], d[VaddSlots];
  for (int i = 0; i < VaddN; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(3 * i + 1);
    a2[i] = -(float)i;
  }
  CHECK_OK(mlcc_device_write(device, bufA, offA, a, sizeof(a)));
  CHECK_OK(mlcc_device_write(device, bufB, offB, b, sizeof(b)));

  const uint32_t groups[3] = {VaddSlots / 64, 1, 1};
  const uint32_t n = VaddN;
  // c = a + b, then d = c + a: the second launch reads the first one's
  // writes, with no wait between them.
  mlcc_device_binding first[3] = {{bufA, offA}, {bufB, offB}, {bufC, offC}};
  mlcc_device_binding second[3] = {{bufC, offC}, {bufA, offA}, {bufD, 0}};
  CHECK_OK(mlcc_device_launch(device, vadd, groups, &n, 1, first, 3));
  CHECK_OK(mlcc_device_launch(device, vadd, groups, &n, 1, second, 3));
  // A write runs the recorded launches first: they must see the old a.
  CHECK_OK(mlcc_device_write(device, bufA, offA, a2, sizeof(a2)));
  CHECK_OK(mlcc_device_read(device, bufC, offC, c, sizeof(c)));
  CHECK_OK(mlcc_device_read(device, bufD, 0, d, sizeof(d)));
  int wrong = 0;
  for (int i = 0; i < VaddN; ++i) {
    if (c[i] != a[i] + b[i] || d[i] != (a[i] + b[i]) + a[i]) {
      if (wrong++ < 5)
        fprintf(stderr, "  element %d: c %g (want %g), d %g (want %g)\n", i,
                (double)c[i], (double)(a[i] + b[i]), (double)d[i],
                (double)(a[i] + b[i] + a[i]));
    }
  }
  CHECK(wrong == 0, "%d of %d vadd results are wrong", wrong, VaddN);
  // The invocations past n wrote nothing, and nothing landed before the
  // offset: both still hold the zeros of a new buffer.
  for (int i = VaddN; i < VaddSlots; ++i)
    CHECK(c[i] == 0 && d[i] == 0, "element %d past n was written", i);
  unsigned char head[64];
  uint64_t headBytes = offC < sizeof(head) ? offC : sizeof(head);
  CHECK_OK(mlcc_device_read(device, bufC, 0, head, headBytes));
  for (uint64_t i = 0; i < headBytes; ++i)
    CHECK(head[i] == 0, "byte %llu before the binding offset is %u",
          (unsigned long long)i, head[i]);
  printf("  c[999] = %g, d[999] = %g\n", (double)c[VaddN - 1],
         (double)d[VaddN - 1]);

  // Many launches: more than the 1 MiB params buffer holds, so it is run
  // and reused while launches are recorded. acc += ones over the first n_k
  // elements, with n_k = k % 65 different at each launch: every launch
  // must see its own parameter words and every earlier launch's writes.
  const uint32_t launches =
      (uint32_t)((1u << 20) / (align < 4 ? 4 : align)) + 1000;
  enum { AccN = 64 };
  static float ones[AccN], acc[AccN];
  for (int i = 0; i < AccN; ++i)
    ones[i] = 1.0f;
  CHECK_OK(mlcc_device_write(device, bufB, 0, ones, sizeof(ones)));
  const uint32_t oneGroup[3] = {1, 1, 1};
  mlcc_device_binding accumulate[3] = {{bufD, 0}, {bufB, 0}, {bufD, 0}};
  CHECK_OK(mlcc_device_write(device, bufD, 0, acc, sizeof(acc))); // zeros
  mlcc_status status = MLCC_OK;
  for (uint32_t k = 0; k < launches && status == MLCC_OK; ++k) {
    uint32_t nk = k % 65;
    status = mlcc_device_launch(device, vadd, oneGroup, &nk, 1, accumulate, 3);
  }
  CHECK_OK(status);
  CHECK_OK(mlcc_device_read(device, bufD, 0, acc, sizeof(acc)));
  wrong = 0;
  for (uint32_t i = 0; i < AccN; ++i) {
    // Launches with i < k % 65: each full cycle of 65 has 64 - i of them.
    uint32_t want = launches / 65 * (64 - i);
    uint32_t rest = launches % 65;
    want += rest > i + 1 ? rest - (i + 1) : 0;
    if (acc[i] != (float)want && wrong++ < 5)
      fprintf(stderr, "  acc[%u] = %g, want %u\n", i, (double)acc[i], want);
  }
  CHECK(wrong == 0, "%d accumulated sums are wrong after %u launches", wrong,
        launches);
  printf("  %u chained launches: acc[0] = %g\n", launches, (double)acc[0]);
done:
  mlcc_device_buffer_destroy(device, bufA);
  mlcc_device_buffer_destroy(device, bufB);
  mlcc_device_buffer_destroy(device, bufC);
  mlcc_device_buffer_destroy(device, bufD);
}

//===-- 3. A workgroup reduction, with and without its barriers -----------===//

enum { ReduceN = 256 };

// The sum of `data` filled for trial `trial`: small integers, so every
// partial sum is exact in float whatever the order.
static float fillReduce(float *data, int trial) {
  float sum = 0;
  for (int i = 0; i < ReduceN; ++i) {
    data[i] = (float)((i * 37 + trial * 11) % 101 + trial);
    sum += data[i];
  }
  return sum;
}

static bool runReduce(mlcc_device *device, mlcc_device_kernel *kernel,
                      mlcc_device_buffer *in, mlcc_device_buffer *out,
                      int trial, float *got, float *want) {
  float data[ReduceN];
  *want = fillReduce(data, trial);
  *got = -1;
  const uint32_t groups[3] = {1, 1, 1};
  mlcc_device_binding bindings[2] = {{in, 0}, {out, 0}};
  mlcc_status s1 = mlcc_device_write(device, in, 0, data, sizeof(data));
  // No parameter words: binding 0 is still bound.
  mlcc_status s2 =
      mlcc_device_launch(device, kernel, groups, NULL, 0, bindings, 2);
  mlcc_status s3 = mlcc_device_read(device, out, 0, got, sizeof(*got));
  CHECK(s1 == MLCC_OK && s2 == MLCC_OK && s3 == MLCC_OK, "reduce: %s",
        mlcc_last_error_message());
  return s1 == MLCC_OK && s2 == MLCC_OK && s3 == MLCC_OK;
}

static void testReduce(mlcc_device *device) {
  printf("workgroup reduction over %d floats\n", ReduceN);
  mlcc_device_kernel *withBarriers =
      makeKernel(device, "reduce", "reduce", 2, ReduceN);
  mlcc_device_kernel *racy =
      makeKernel(device, "reduce_racy", "reduce", 2, ReduceN);
  mlcc_device_buffer *in = makeBuffer(device, ReduceN * sizeof(float));
  mlcc_device_buffer *out = makeBuffer(device, 16);
  if (withBarriers && racy && in && out) {
    float got, want;
    for (int trial = 0; trial < 3; ++trial)
      if (runReduce(device, withBarriers, in, out, trial, &got, &want)) {
        printf("  with barriers, data %d: %g (want %g)\n", trial, (double)got,
               (double)want);
        CHECK(got == want, "the reduction with barriers gave %g, want %g",
              (double)got, (double)want);
      }
    // The oracle has to bite: without barriers the sum must come out wrong
    // at least once. Other data each time, so stale workgroup memory from
    // the run before cannot hold the right partial sums.
    int wrongRuns = 0, runs = 0;
    for (int trial = 10; trial < 18 && wrongRuns == 0; ++trial, ++runs)
      if (runReduce(device, racy, in, out, trial, &got, &want)) {
        printf("  without barriers, data %d: %g (want %g)%s\n", trial,
               (double)got, (double)want, got == want ? "" : ": wrong");
        wrongRuns += got != want;
      }
    CHECK(wrongRuns > 0,
          "the reduction without barriers was right %d times out of %d: the "
          "test cannot tell whether barriers work",
          runs, runs);
  }
  mlcc_device_kernel_destroy(device, withBarriers);
  mlcc_device_kernel_destroy(device, racy);
  mlcc_device_buffer_destroy(device, in);
  mlcc_device_buffer_destroy(device, out);
}

//===-- 4. Errors ---------------------------------------------------------===//

static void testErrors(mlcc_device *device, mlcc_device_kernel *vadd) {
  printf("errors\n");
  const uint64_t align = mlcc_device_offset_alignment(device);
  mlcc_device_buffer *buf = makeBuffer(device, 4 * align + 256);
  if (!buf)
    return;
  const uint32_t groups[3] = {1, 1, 1};
  const uint32_t n = 64;
  mlcc_device_binding two[2] = {{buf, 0}, {buf, 0}};
  expectFailure(mlcc_device_launch(device, vadd, groups, &n, 1, two, 2),
                MLCC_INVALID_ARGUMENT, "vadd with 2 bindings");
  CHECK(strstr(mlcc_last_error_message(), "vadd") != NULL,
        "the message does not name the kernel: %s", mlcc_last_error_message());

  mlcc_device_buffer *empty = NULL;
  expectFailure(mlcc_device_buffer_create(device, 0, &empty),
                MLCC_INVALID_ARGUMENT, "a buffer of 0 bytes");
  CHECK(empty == NULL, "a failed create left a buffer");

  mlcc_device_binding three[3] = {{buf, 0}, {buf, 0}, {buf, 0}};
  if (align > 1) {
    three[1].offset = align / 2;
    expectFailure(mlcc_device_launch(device, vadd, groups, &n, 1, three, 3),
                  MLCC_INVALID_ARGUMENT, "a misaligned binding offset");
  }
  three[1].offset = 8 * align + 512;
  expectFailure(mlcc_device_launch(device, vadd, groups, &n, 1, three, 3),
                MLCC_OUT_OF_RANGE, "a binding offset past the buffer");
  three[1].offset = 0;
  const uint32_t tooMany[3] = {UINT32_MAX, 1, 1};
  expectFailure(mlcc_device_launch(device, vadd, tooMany, &n, 1, three, 3),
                MLCC_OUT_OF_RANGE, "UINT32_MAX workgroups");
  const uint32_t none[3] = {4, 0, 1};
  CHECK_OK(mlcc_device_launch(device, vadd, none, &n, 1, three, 3));
  float word;
  expectFailure(mlcc_device_read(device, buf, 4 * align + 256, &word, 4),
                MLCC_OUT_OF_RANGE, "a read past the end");

  uint64_t bytes = 0;
  uint32_t *code = loadShader("vadd", &bytes);
  if (code) {
    mlcc_device_kernel_desc desc = {"not_vadd", code, bytes, 3, {64, 1, 1}};
    mlcc_device_kernel *kernel = NULL;
    expectFailure(mlcc_device_kernel_create(device, &desc, &kernel),
                  MLCC_INVALID_ARGUMENT, "an entry point that is not there");
    desc.name = "vadd";
    desc.workgroup_size[0] = 32;
    expectFailure(mlcc_device_kernel_create(device, &desc, &kernel),
                  MLCC_INVALID_ARGUMENT, "the wrong workgroup size");
    CHECK(kernel == NULL, "a failed create left a kernel");
    free(code);
  }
  // NULL where device.h allows it.
  mlcc_device_close(NULL);
  mlcc_device_buffer_destroy(device, NULL);
  mlcc_device_kernel_destroy(device, NULL);
  mlcc_device_buffer_destroy(device, buf);

  mlcc_device *other = NULL;
  expectFailure(mlcc_device_open(MLCC_DEVICE_API_VULKAN, "no-such-gpu", &other),
                MLCC_NO_DEVICE, "selector 'no-such-gpu'");
  CHECK(strstr(mlcc_last_error_message(), "llvmpipe") != NULL,
        "the message does not list llvmpipe");
  CHECK(other == NULL, "a failed open left a device");
  expectFailure(mlcc_device_open(MLCC_DEVICE_API_VULKAN, "7", &other),
                MLCC_NO_DEVICE, "selector '7'");

  // No driver at all: the loader finds no ICD.
  const char *saved = getenv("VK_ICD_FILENAMES");
  char *copy = NULL;
  if (saved) {
    copy = malloc(strlen(saved) + 1);
    if (copy)
      strcpy(copy, saved);
  }
  setenv("VK_ICD_FILENAMES", "/nonexistent/mlcc_no_icd.json", 1);
  printf("  (with validation, the loader's messages about it are expected)\n");
  fflush(stdout);
  expectFailure(mlcc_device_open(MLCC_DEVICE_API_VULKAN, NULL, &other),
                MLCC_NO_DEVICE, "VK_ICD_FILENAMES naming no file");
  CHECK(other == NULL, "a failed open left a device");
  if (copy)
    setenv("VK_ICD_FILENAMES", copy, 1);
  else
    unsetenv("VK_ICD_FILENAMES");
  free(copy);
}

//===-- 5b. The validation counter counts -------------------------------===//

// Case 5 (no validation messages) proves nothing unless a message would be
// counted: on a second device, a kernel whose shader uses bindings 2 and 3
// of a layout that has only 0 and 1 must give validation errors. Only with
// the layer on (without it this is undefined behaviour) and on lavapipe,
// which is known to survive it.
static void testValidationCounts(const char *name) {
  const char *flag = getenv("MLCC_VULKAN_VALIDATION");
  if (!flag || strcmp(flag, "1") != 0 || !strstr(name, "llvmpipe")) {
    printf("validation counter: not checked (needs MLCC_VULKAN_VALIDATION=1 "
           "and lavapipe)\n");
    return;
  }
  printf("validation counter: 2 validation errors expected below\n");
  fflush(stdout);
  mlcc_device *device = NULL;
  CHECK_OK(mlcc_device_open(MLCC_DEVICE_API_VULKAN, "llvmpipe", &device));
  if (!device)
    return;
  uint64_t bytes = 0;
  uint32_t *code = loadShader("vadd", &bytes);
  if (code) {
    mlcc_device_kernel_desc desc = {"vadd", code, bytes, 1, {64, 1, 1}};
    mlcc_device_kernel *kernel = NULL;
    mlcc_device_kernel_create(device, &desc, &kernel); // invalid, not caught
    mlcc_device_kernel_destroy(device, kernel);
    free(code);
  }
  uint64_t messages = mlcc_device_validation_messages(device);
  printf("  a layout missing bindings 2 and 3: %llu validation messages\n",
         (unsigned long long)messages);
  CHECK(messages > 0, "the validation layer's messages are not counted");
  mlcc_device_close(device);
}

int main(void) {
  mlcc_device *device = NULL;
  mlcc_status status = mlcc_device_open(MLCC_DEVICE_API_VULKAN, NULL, &device);
  if (status == MLCC_NO_DEVICE) {
    printf("skipped: %s\n", mlcc_last_error_message());
    return 77;
  }
  if (status != MLCC_OK) {
    fprintf(stderr, "FAIL: mlcc_device_open: %s: %s\n",
            mlcc_status_string(status), mlcc_last_error_message());
    return 1;
  }
  // 1. The device.
  printf("device: %s, offset alignment %llu\n", mlcc_device_name(device),
         (unsigned long long)mlcc_device_offset_alignment(device));
  CHECK(mlcc_device_offset_alignment(device) > 0, "alignment 0");
  CHECK(mlcc_device_name(device)[0] != '\0', "no device name");

  mlcc_device_kernel *vadd = makeKernel(device, "vadd", "vadd", 3, 64);
  if (vadd) {
    testVadd(device, vadd);
    testReduce(device);
    testErrors(device, vadd);
  }
  mlcc_device_kernel_destroy(device, vadd);
  CHECK_OK(mlcc_device_wait(device));
  testValidationCounts(mlcc_device_name(device));

  // 5. The validation layer saw nothing wrong (with MLCC_VULKAN_VALIDATION=1;
  // without it the count is 0 anyway).
  uint64_t messages = mlcc_device_validation_messages(device);
  printf("validation messages: %llu\n", (unsigned long long)messages);
  CHECK(messages == 0, "%llu validation messages",
        (unsigned long long)messages);
  mlcc_device_close(device);

  if (Failures) {
    fprintf(stderr, "%d check(s) failed\n", Failures);
    return 1;
  }
  printf("all passed\n");
  return 0;
}
