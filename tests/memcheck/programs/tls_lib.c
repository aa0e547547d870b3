// The library libc_state loads with dlopen: thread-local storage of a module loaded after
// start-up, which the dynamic linker allocates on each thread's first use of it.
static __thread char tls_buffer[4096];

int tls_lib_touch(int value) {
  tls_buffer[value % sizeof(tls_buffer)] = (char)value;
  return tls_buffer[0] + value;
}
