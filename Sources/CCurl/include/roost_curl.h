#ifndef ROOST_CURL_H
#define ROOST_CURL_H

// libcurl (Debian's libcurl4-openssl-dev), Roost's client for SMTP (mail) and HTTP (webhooks), loaded with
// dlopen the first time one of them is used instead of linked: libcurl pulls in some twenty libraries (GnuTLS
// through librtmp, Kerberos, LDAP, libssh2, ...), and linked (with FoundationNetworking, which also needs it)
// they made every server 2 MB larger at start (RssFile 30 → 28 MB in /proc/<pid>/status, release build),
// most servers never sending a mail or calling a webhook.
// The types and constants come from libcurl's own header. See https://curl.se/libcurl/c/libcurl-easy.html
#include <curl/curl.h>
#include <stddef.h>

/// Loads libcurl once (later calls return at once): NULL when it is ready, else why not (dlopen's message).
const char *roost_curl_load(void);

// libcurl's functions, through the loaded library; call roost_curl_load first.
CURL *roost_curl_easy_init(void);
void roost_curl_easy_cleanup(CURL *handle);
void roost_curl_easy_reset(CURL *handle);
CURLcode roost_curl_easy_perform(CURL *handle);
const char *roost_curl_easy_strerror(CURLcode code);
struct curl_slist *roost_curl_slist_append(struct curl_slist *list, const char *text);
void roost_curl_slist_free_all(struct curl_slist *list);

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper per
// argument type used. See https://curl.se/libcurl/c/curl_easy_setopt.html

/// An option taking a long (CURLOPT_UPLOAD, CURLOPT_USE_SSL, timeouts, ...).
CURLcode roost_curl_set_long(CURL *handle, CURLoption option, long value);
/// An option taking a string, which libcurl copies (CURLOPT_URL, CURLOPT_MAIL_FROM, ...).
CURLcode roost_curl_set_string(CURL *handle, CURLoption option, const char *value);
/// An option taking a pointer libcurl keeps until the transfer ends (CURLOPT_MAIL_RCPT's list, CURLOPT_READDATA's FILE).
CURLcode roost_curl_set_pointer(CURL *handle, CURLoption option, void *value);
/// CURLINFO_RESPONSE_CODE: the last reply code (SMTP or HTTP).
long roost_curl_response_code(CURL *handle);

/// POSTs `length` bytes of JSON to `url` (http or https only, redirects followed at most 5 times) with one
/// extra header line `header` ("Name: value", or NULL), within `timeout_ms` in all (a reply that trickles
/// does not extend it). The reply's body, at most `max_reply` bytes (more fails the call), goes to `*reply`
/// (malloc'ed, to be freed; NULL when empty) and `*reply_length`, its HTTP status to `*status`. Returns CURLE_OK, or
/// why it failed (CURLE_FAILED_INIT when libcurl cannot be loaded).
CURLcode roost_curl_post_json(const char *url, const char *header, const void *body, size_t length, long timeout_ms,
                              size_t max_reply, char **reply, size_t *reply_length, long *status);

#endif
