#include "roost_curl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} api;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "cannot load libcurl: %s", dlerror());
        return;
    }
#define RESOLVE(field, name)                                                                   \
    if (!(*(void **)&api.field = dlsym(library, name))) {                                      \
        snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s", name);               \
        return;                                                                                \
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_reset, "curl_easy_reset")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(easy_strerror, "curl_easy_strerror")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
#undef RESOLVE
    // Once, before any handle and while no other thread uses libcurl (pthread_once holds the others back).
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) snprintf(load_error, sizeof load_error, "curl_global_init failed");
}

const char *roost_curl_load(void) {
    pthread_once(&loaded, load);
    return load_error[0] ? load_error : NULL;
}

CURL *roost_curl_easy_init(void) { return api.easy_init(); }
void roost_curl_easy_cleanup(CURL *handle) { api.easy_cleanup(handle); }
void roost_curl_easy_reset(CURL *handle) { api.easy_reset(handle); }
CURLcode roost_curl_easy_perform(CURL *handle) { return api.easy_perform(handle); }
const char *roost_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
struct curl_slist *roost_curl_slist_append(struct curl_slist *list, const char *text) { return api.slist_append(list, text); }
void roost_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }

CURLcode roost_curl_set_long(CURL *handle, CURLoption option, long value) { return api.easy_setopt(handle, option, value); }
CURLcode roost_curl_set_string(CURL *handle, CURLoption option, const char *value) { return api.easy_setopt(handle, option, value); }
CURLcode roost_curl_set_pointer(CURL *handle, CURLoption option, void *value) { return api.easy_setopt(handle, option, value); }

long roost_curl_response_code(CURL *handle) {
    long code = 0;
    api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

struct reply {
    char *bytes;
    size_t length;
    size_t limit;
};

/// CURLOPT_WRITEFUNCTION: appends to the reply; returning less than given ends the transfer (too big, or no memory).
static size_t collect(char *data, size_t size, size_t count, void *context) {
    struct reply *reply = context;
    size_t given = size * count;
    if (given > reply->limit - reply->length) return 0;
    char *grown = realloc(reply->bytes, reply->length + given);
    if (!grown) return 0;
    memcpy(grown + reply->length, data, given);
    reply->bytes = grown;
    reply->length += given;
    return given;
}

CURLcode roost_curl_post_json(const char *url, const char *header, const void *body, size_t length, long timeout_ms,
                              size_t max_reply, char **reply_bytes, size_t *reply_length, long *status) {
    *reply_bytes = NULL;
    *reply_length = 0;
    *status = 0;
    if (roost_curl_load()) return CURLE_FAILED_INIT;
    CURL *handle = api.easy_init();
    if (!handle) return CURLE_FAILED_INIT;
    struct curl_slist *headers = api.slist_append(NULL, "Content-Type: application/json");
    if (header) headers = api.slist_append(headers, header);
    struct reply reply = {NULL, 0, max_reply};
    CURLcode code = CURLE_OK;
#define SET(option, value) \
    if (code == CURLE_OK) code = api.easy_setopt(handle, option, value);
    SET(CURLOPT_URL, url)
    SET(CURLOPT_PROTOCOLS_STR, "http,https")
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
    SET(CURLOPT_FOLLOWLOCATION, 1L)
    SET(CURLOPT_MAXREDIRS, 5L)
    SET(CURLOPT_POST, 1L)
    SET(CURLOPT_POSTFIELDS, body)
    SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)length)
    SET(CURLOPT_HTTPHEADER, headers)
    SET(CURLOPT_WRITEFUNCTION, collect)
    SET(CURLOPT_WRITEDATA, &reply)
    SET(CURLOPT_NOSIGNAL, 1L)  // Timeouts without SIGALRM: request threads call this.
    SET(CURLOPT_TIMEOUT_MS, timeout_ms)
#undef SET
    if (code == CURLE_OK) code = api.easy_perform(handle);
    if (code == CURLE_OK) api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, status);
    api.easy_cleanup(handle);
    api.slist_free_all(headers);
    if (code != CURLE_OK) {
        free(reply.bytes);
        return code;
    }
    *reply_bytes = reply.bytes;
    *reply_length = reply.length;
    return CURLE_OK;
}
