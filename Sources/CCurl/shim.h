#ifndef ROOST_CCURL_SHIM_H
#define ROOST_CCURL_SHIM_H

// libcurl (Debian's libcurl4-openssl-dev), used only as an SMTP client: it speaks SMTP, SMTPS and
// STARTTLS with certificate checks. See https://curl.se/libcurl/c/libcurl-easy.html
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper
// per argument type used. See https://curl.se/libcurl/c/curl_easy_setopt.html

/// An option taking a long (CURLOPT_UPLOAD, CURLOPT_USE_SSL, timeouts, ...).
static inline CURLcode roost_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// An option taking a string, which libcurl copies (CURLOPT_URL, CURLOPT_MAIL_FROM, ...).
static inline CURLcode roost_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// An option taking a pointer libcurl keeps until the transfer ends (CURLOPT_MAIL_RCPT's list, CURLOPT_READDATA's FILE).
static inline CURLcode roost_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLINFO_RESPONSE_CODE: the last SMTP reply code.
static inline long roost_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

#endif
