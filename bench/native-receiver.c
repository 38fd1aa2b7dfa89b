/*
 * A reference for bench/upload.ts: the least an HTTP server can do to take part uploads the way the embedded store
 * does, written in C so that it costs nothing but the work itself. Each connection gets a thread that receives part
 * bodies into a 1 MiB aligned buffer, hashes them with OpenSSL's MD5 and writes them with O_DIRECT at
 * (partNumber - 1) * partSize of one file, then answers 200 with the part's MD5 as its ETag. No signatures, no
 * records, no database: what it measures is the machine (the client, the sockets, MD5 and the disk on the same cores).
 *
 *   native-receiver <port> <file> <partSize> <hashPercent>
 *
 * hashPercent 100 hashes every byte (a real ETag). Less hashes only that share of each buffer: with the share that
 * makes OpenSSL's cost per byte equal to the multi-buffer kernel's (src/storage/md5x4.ts), it bounds what any server
 * with that kernel could do here (its ETags are then not the parts' MD5).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUFFER (1 << 20)
#define BLOCK 4096

static const char *path;
static long part_size;
static long hash_percent;

static long header_value(const char *headers, const char *name) {
  const char *at = strcasestr(headers, name);
  return at ? atol(at + strlen(name)) : -1;
}

static int receive_all(int s, char *into, long want, long *got) {
  while (*got < want) {
    ssize_t n = recv(s, into + *got, want - *got, 0);
    if (n <= 0) return -1;
    *got += n;
  }
  return 0;
}

static void *connection(void *arg) {
  int s = (int)(long)arg;
  char headers[16384];
  long held = 0;
  char *buffer;
  if (posix_memalign((void **)&buffer, BLOCK, BUFFER)) return NULL;
  int direct = open(path, O_WRONLY | O_DIRECT);
  int buffered = open(path, O_WRONLY);
  if (direct < 0) direct = buffered; /* a file system without direct I/O */
  EVP_MD_CTX *md5 = EVP_MD_CTX_new();
  for (;;) {
    char *end;
    while (!(end = memmem(headers, held, "\r\n\r\n", 4))) {
      ssize_t n = recv(s, headers + held, sizeof headers - 1 - held, 0);
      if (n <= 0) goto done;
      held += n;
    }
    *end = 0;
    long head = end - headers + 4;
    long length = header_value(headers, "content-length:");
    char *query = strstr(headers, "partNumber=");
    long part = query ? atol(query + strlen("partNumber=")) : 0;
    if (length < 0 || part < 1) goto done;
    if (strcasestr(headers, "expect: 100-continue")) send(s, "HTTP/1.1 100 Continue\r\n\r\n", 25, MSG_NOSIGNAL);

    EVP_DigestInit_ex(md5, EVP_md5(), NULL);
    long filled = held - head < length ? held - head : length;
    memcpy(buffer, headers + head, filled);
    memmove(headers, headers + head + filled, held - head - filled); /* a pipelined next request */
    held -= head + filled;
    long position = (part - 1) * part_size, received = filled;
    for (;;) {
      long want = length - received + filled < BUFFER ? length - received + filled : BUFFER;
      long before = filled;
      if (receive_all(s, buffer, want, &filled)) goto done;
      received += filled - before;
      EVP_DigestUpdate(md5, buffer, filled * hash_percent / 100);
      if (pwrite(filled % BLOCK ? buffered : direct, buffer, filled, position) != filled) goto done;
      position += filled;
      filled = 0;
      if (received >= length) break;
    }
    unsigned char digest[16];
    EVP_DigestFinal_ex(md5, digest, NULL);
    char answer[160];
    int n = sprintf(answer, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nETag: \"");
    for (int i = 0; i < 16; i++) n += sprintf(answer + n, "%02x", digest[i]);
    n += sprintf(answer + n, "\"\r\n\r\n");
    if (send(s, answer, n, MSG_NOSIGNAL) != n) goto done;
  }
done:
  EVP_MD_CTX_free(md5);
  close(s);
  if (direct != buffered) close(direct);
  close(buffered);
  free(buffer);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s <port> <file> <partSize> <hashPercent>\n", argv[0]);
    return 2;
  }
  path = argv[2];
  part_size = atol(argv[3]);
  hash_percent = atol(argv[4]);
  int created = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (created < 0) return perror(path), 1;
  close(created);
  int listener = socket(AF_INET, SOCK_STREAM, 0), yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 64)) return perror("listen"), 1;
  printf("listening\n");
  fflush(stdout);
  for (;;) {
    int s = accept(listener, NULL, NULL);
    if (s < 0) continue;
    pthread_t thread;
    if (pthread_create(&thread, NULL, connection, (void *)(long)s) == 0) pthread_detach(thread);
    else close(s);
  }
}
