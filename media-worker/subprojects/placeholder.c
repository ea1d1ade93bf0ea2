/* The worker's meson.build names a static library of each dependency it would have compiled
 * itself (for the link_whole list of its shared-library target, which svc never builds). With
 * Debian's libraries linked instead, those libraries hold only this. */
typedef int svc_media_worker_placeholder;
