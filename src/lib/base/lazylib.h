/*
 * lazylib.h: libcurl, libgit2 and libarchive, loaded when first used.
 *
 * Linked normally, the three and what they pull in (gnutls, krb5, ldap,
 * ssh2, ...) are about 45 shared objects: every agentguard process paid
 * ~25 ms of loading before main(), including `validate`, `render` and
 * `evidence verify`, which use none of them (and the test suite runs
 * agentguard thousands of times on 2 cores). Now only a process that talks
 * to the engine, reads git or reads an image archive loads them, by the
 * same soname the linker would have recorded (the build reads it from the
 * library it compiled against), with the same search rules.
 *
 * A file that calls one of these libraries includes its header first, then
 * this one: each function it calls becomes a call through the loaded
 * table, typed by the library's own prototype (__typeof__). Every entry
 * path loads explicitly first (ag_lazy_*_load: a named error,
 * "lib.load", when the library is missing); a call with no load before it
 * loads on the spot and, failing that, stops the process with the reason
 * (a programming error: no such path exists).
 *
 * The lists are exactly the functions src/ calls: a function missing here
 * fails the link (the libraries are no longer on it).
 */
#ifndef AG_LAZYLIB_H
#define AG_LAZYLIB_H

#include "lib/base/error.h"

#define AG_LAZY_CURL_FUNCS(X)                                                                      \
	X(curl_easy_cleanup)                                                                       \
	X(curl_easy_getinfo)                                                                       \
	X(curl_easy_init)                                                                          \
	X(curl_easy_perform)                                                                       \
	X(curl_easy_reset)                                                                         \
	X(curl_easy_setopt)                                                                        \
	X(curl_easy_strerror)                                                                      \
	X(curl_global_init)                                                                        \
	X(curl_multi_add_handle)                                                                   \
	X(curl_multi_cleanup)                                                                      \
	X(curl_multi_info_read)                                                                    \
	X(curl_multi_init)                                                                         \
	X(curl_multi_perform)                                                                      \
	X(curl_multi_poll)                                                                         \
	X(curl_multi_remove_handle)                                                                \
	X(curl_slist_append)                                                                       \
	X(curl_slist_free_all)                                                                     \
	X(curl_version_info)

#define AG_LAZY_GIT2_FUNCS(X)                                                                      \
	X(git_blob_create_from_buffer)                                                             \
	X(git_commit_create)                                                                       \
	X(git_config_free)                                                                         \
	X(git_config_set_bool)                                                                     \
	X(git_diff_options_init)                                                                   \
	X(git_error_last)                                                                          \
	X(git_index_add)                                                                           \
	X(git_index_conflict_get)                                                                  \
	X(git_index_entrycount)                                                                    \
	X(git_index_free)                                                                          \
	X(git_index_get_byindex)                                                                   \
	X(git_index_write)                                                                         \
	X(git_index_write_tree)                                                                    \
	X(git_libgit2_init)                                                                        \
	X(git_libgit2_opts)                                                                        \
	X(git_libgit2_shutdown)                                                                    \
	X(git_object_free)                                                                         \
	X(git_object_id)                                                                           \
	X(git_odb_hash)                                                                            \
	X(git_oid_fmt)                                                                             \
	X(git_oid_tostr)                                                                           \
	X(git_patch_free)                                                                          \
	X(git_patch_from_buffers)                                                                  \
	X(git_patch_get_delta)                                                                     \
	X(git_patch_num_hunks)                                                                     \
	X(git_patch_print)                                                                         \
	X(git_reference_free)                                                                      \
	X(git_reference_peel)                                                                      \
	X(git_repository_commondir)                                                                \
	X(git_repository_config)                                                                   \
	X(git_repository_free)                                                                     \
	X(git_repository_head)                                                                     \
	X(git_repository_index)                                                                    \
	X(git_repository_init_ext)                                                                 \
	X(git_repository_init_options_init)                                                        \
	X(git_repository_is_bare)                                                                  \
	X(git_repository_open_ext)                                                                 \
	X(git_repository_path)                                                                     \
	X(git_repository_workdir)                                                                  \
	X(git_signature_new)                                                                       \
	X(git_status_byindex)                                                                      \
	X(git_status_list_entrycount)                                                              \
	X(git_status_list_free)                                                                    \
	X(git_status_list_new)                                                                     \
	X(git_status_options_init)                                                                 \
	X(git_tree_lookup)

#define AG_LAZY_ARCHIVE_FUNCS(X)                                                                   \
	X(archive_entry_filetype)                                                                  \
	X(archive_entry_gid)                                                                       \
	X(archive_entry_hardlink_utf8)                                                             \
	X(archive_entry_pathname_utf8)                                                             \
	X(archive_entry_perm)                                                                      \
	X(archive_entry_symlink_utf8)                                                              \
	X(archive_entry_uid)                                                                       \
	X(archive_read_data_block)                                                                 \
	X(archive_read_free)                                                                       \
	X(archive_read_new)                                                                        \
	X(archive_read_next_header)                                                                \
	X(archive_read_open_fd)                                                                    \
	X(archive_read_support_filter_none)                                                        \
	X(archive_read_support_format_tar)

/* Loads the library once (thread-safe); 0, or -1 with "lib.load". */
int ag_lazy_curl_load(struct ag_error **err);
int ag_lazy_git2_load(struct ag_error **err);
int ag_lazy_archive_load(struct ag_error **err);

#define AG_LAZY_SLOT(n) __typeof__(&n) n;

#if defined(CURLINC_CURL_H) && !defined(AG_LAZY_CURL_TABLE)
#define AG_LAZY_CURL_TABLE
struct ag_lazy_curl_fns {
	AG_LAZY_CURL_FUNCS(AG_LAZY_SLOT)
};
const struct ag_lazy_curl_fns *ag_lazy_curl(void);
#ifndef AG_LAZYLIB_IMPL
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define AG_LAZY_CURL_CALL(n) (*ag_lazy_curl()->n)
#define curl_easy_cleanup AG_LAZY_CURL_CALL(curl_easy_cleanup)
#define curl_easy_getinfo AG_LAZY_CURL_CALL(curl_easy_getinfo)
#define curl_easy_init AG_LAZY_CURL_CALL(curl_easy_init)
#define curl_easy_perform AG_LAZY_CURL_CALL(curl_easy_perform)
#define curl_easy_reset AG_LAZY_CURL_CALL(curl_easy_reset)
#define curl_easy_setopt AG_LAZY_CURL_CALL(curl_easy_setopt)
#define curl_easy_strerror AG_LAZY_CURL_CALL(curl_easy_strerror)
#define curl_global_init AG_LAZY_CURL_CALL(curl_global_init)
#define curl_multi_add_handle AG_LAZY_CURL_CALL(curl_multi_add_handle)
#define curl_multi_cleanup AG_LAZY_CURL_CALL(curl_multi_cleanup)
#define curl_multi_info_read AG_LAZY_CURL_CALL(curl_multi_info_read)
#define curl_multi_init AG_LAZY_CURL_CALL(curl_multi_init)
#define curl_multi_perform AG_LAZY_CURL_CALL(curl_multi_perform)
#define curl_multi_poll AG_LAZY_CURL_CALL(curl_multi_poll)
#define curl_multi_remove_handle AG_LAZY_CURL_CALL(curl_multi_remove_handle)
#define curl_slist_append AG_LAZY_CURL_CALL(curl_slist_append)
#define curl_slist_free_all AG_LAZY_CURL_CALL(curl_slist_free_all)
#define curl_version_info AG_LAZY_CURL_CALL(curl_version_info)
#endif
#endif

#if defined(INCLUDE_git_git_h__) && !defined(AG_LAZY_GIT2_TABLE)
#define AG_LAZY_GIT2_TABLE
struct ag_lazy_git2_fns {
	AG_LAZY_GIT2_FUNCS(AG_LAZY_SLOT)
};
const struct ag_lazy_git2_fns *ag_lazy_git2(void);
#ifndef AG_LAZYLIB_IMPL
#define AG_LAZY_GIT2_CALL(n) (*ag_lazy_git2()->n)
#define git_blob_create_from_buffer AG_LAZY_GIT2_CALL(git_blob_create_from_buffer)
#define git_commit_create AG_LAZY_GIT2_CALL(git_commit_create)
#define git_config_free AG_LAZY_GIT2_CALL(git_config_free)
#define git_config_set_bool AG_LAZY_GIT2_CALL(git_config_set_bool)
#define git_diff_options_init AG_LAZY_GIT2_CALL(git_diff_options_init)
#define git_error_last AG_LAZY_GIT2_CALL(git_error_last)
#define git_index_add AG_LAZY_GIT2_CALL(git_index_add)
#define git_index_conflict_get AG_LAZY_GIT2_CALL(git_index_conflict_get)
#define git_index_entrycount AG_LAZY_GIT2_CALL(git_index_entrycount)
#define git_index_free AG_LAZY_GIT2_CALL(git_index_free)
#define git_index_get_byindex AG_LAZY_GIT2_CALL(git_index_get_byindex)
#define git_index_write AG_LAZY_GIT2_CALL(git_index_write)
#define git_index_write_tree AG_LAZY_GIT2_CALL(git_index_write_tree)
#define git_libgit2_init AG_LAZY_GIT2_CALL(git_libgit2_init)
#define git_libgit2_opts AG_LAZY_GIT2_CALL(git_libgit2_opts)
#define git_libgit2_shutdown AG_LAZY_GIT2_CALL(git_libgit2_shutdown)
#define git_object_free AG_LAZY_GIT2_CALL(git_object_free)
#define git_object_id AG_LAZY_GIT2_CALL(git_object_id)
#define git_odb_hash AG_LAZY_GIT2_CALL(git_odb_hash)
#define git_oid_fmt AG_LAZY_GIT2_CALL(git_oid_fmt)
#define git_oid_tostr AG_LAZY_GIT2_CALL(git_oid_tostr)
#define git_patch_free AG_LAZY_GIT2_CALL(git_patch_free)
#define git_patch_from_buffers AG_LAZY_GIT2_CALL(git_patch_from_buffers)
#define git_patch_get_delta AG_LAZY_GIT2_CALL(git_patch_get_delta)
#define git_patch_num_hunks AG_LAZY_GIT2_CALL(git_patch_num_hunks)
#define git_patch_print AG_LAZY_GIT2_CALL(git_patch_print)
#define git_reference_free AG_LAZY_GIT2_CALL(git_reference_free)
#define git_reference_peel AG_LAZY_GIT2_CALL(git_reference_peel)
#define git_repository_commondir AG_LAZY_GIT2_CALL(git_repository_commondir)
#define git_repository_config AG_LAZY_GIT2_CALL(git_repository_config)
#define git_repository_free AG_LAZY_GIT2_CALL(git_repository_free)
#define git_repository_head AG_LAZY_GIT2_CALL(git_repository_head)
#define git_repository_index AG_LAZY_GIT2_CALL(git_repository_index)
#define git_repository_init_ext AG_LAZY_GIT2_CALL(git_repository_init_ext)
#define git_repository_init_options_init AG_LAZY_GIT2_CALL(git_repository_init_options_init)
#define git_repository_is_bare AG_LAZY_GIT2_CALL(git_repository_is_bare)
#define git_repository_open_ext AG_LAZY_GIT2_CALL(git_repository_open_ext)
#define git_repository_path AG_LAZY_GIT2_CALL(git_repository_path)
#define git_repository_workdir AG_LAZY_GIT2_CALL(git_repository_workdir)
#define git_signature_new AG_LAZY_GIT2_CALL(git_signature_new)
#define git_status_byindex AG_LAZY_GIT2_CALL(git_status_byindex)
#define git_status_list_entrycount AG_LAZY_GIT2_CALL(git_status_list_entrycount)
#define git_status_list_free AG_LAZY_GIT2_CALL(git_status_list_free)
#define git_status_list_new AG_LAZY_GIT2_CALL(git_status_list_new)
#define git_status_options_init AG_LAZY_GIT2_CALL(git_status_options_init)
#define git_tree_lookup AG_LAZY_GIT2_CALL(git_tree_lookup)
#endif
#endif

#if defined(ARCHIVE_H_INCLUDED) && defined(ARCHIVE_ENTRY_H_INCLUDED) &&                            \
    !defined(AG_LAZY_ARCHIVE_TABLE)
#define AG_LAZY_ARCHIVE_TABLE
struct ag_lazy_archive_fns {
	AG_LAZY_ARCHIVE_FUNCS(AG_LAZY_SLOT)
};
const struct ag_lazy_archive_fns *ag_lazy_archive(void);
#ifndef AG_LAZYLIB_IMPL
#define AG_LAZY_ARCHIVE_CALL(n) (*ag_lazy_archive()->n)
#define archive_entry_filetype AG_LAZY_ARCHIVE_CALL(archive_entry_filetype)
#define archive_entry_gid AG_LAZY_ARCHIVE_CALL(archive_entry_gid)
#define archive_entry_hardlink_utf8 AG_LAZY_ARCHIVE_CALL(archive_entry_hardlink_utf8)
#define archive_entry_pathname_utf8 AG_LAZY_ARCHIVE_CALL(archive_entry_pathname_utf8)
#define archive_entry_perm AG_LAZY_ARCHIVE_CALL(archive_entry_perm)
#define archive_entry_symlink_utf8 AG_LAZY_ARCHIVE_CALL(archive_entry_symlink_utf8)
#define archive_entry_uid AG_LAZY_ARCHIVE_CALL(archive_entry_uid)
#define archive_read_data_block AG_LAZY_ARCHIVE_CALL(archive_read_data_block)
#define archive_read_free AG_LAZY_ARCHIVE_CALL(archive_read_free)
#define archive_read_new AG_LAZY_ARCHIVE_CALL(archive_read_new)
#define archive_read_next_header AG_LAZY_ARCHIVE_CALL(archive_read_next_header)
#define archive_read_open_fd AG_LAZY_ARCHIVE_CALL(archive_read_open_fd)
#define archive_read_support_filter_none AG_LAZY_ARCHIVE_CALL(archive_read_support_filter_none)
#define archive_read_support_format_tar AG_LAZY_ARCHIVE_CALL(archive_read_support_format_tar)
#endif
#endif

#endif
