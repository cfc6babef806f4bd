//! Opening a page file the walk found, checked on the handle rather than
//! on the path.
//!
//! In: the path the walk saw and the identity (device and inode) of the
//! regular file it saw there. Out: the open file, or why it is refused.
//! Between the walk and the read, anyone who can write inside the site can
//! swap the page (or a directory above it) for a symbolic link out of the
//! site or for a FIFO; checking the path again would leave the same gap.
//! So the file is opened without blocking (a FIFO opens at once instead
//! of waiting for a writer), without following a final symbolic link
//! where the walk saw none, and is read only when the opened file is the
//! very file the walk checked.

use std::fs::{File, Metadata};
use std::path::Path;

/// Which file the walk checked: a regular file inside the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
    /// The walk reached it through a symbolic link (checked to stay in
    /// the site), so opening it follows that link.
    via_link: bool,
}

impl FileId {
    /// The identity of the file `meta` describes (`meta` of the link's
    /// target when `via_link`).
    pub(super) fn of(meta: &Metadata, via_link: bool) -> FileId {
        let (dev, ino) = dev_ino(meta);
        FileId { dev, ino, via_link }
    }

    /// The file itself, whatever path or link reached it: `None` where
    /// the platform does not tell.
    pub(super) fn file(&self) -> Option<(u64, u64)> {
        cfg!(unix).then_some((self.dev, self.ino))
    }

    /// Whether the walk reached the file through a symbolic link.
    pub(super) fn via_link(&self) -> bool {
        self.via_link
    }
}

/// Why an opened page is not read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The path no longer leads to the file the walk checked.
    Changed,
    /// The opened file is a FIFO, socket, device or directory.
    NotRegular,
}

impl Refusal {
    pub(super) fn reason(&self) -> &'static str {
        match self {
            Refusal::Changed => {
                "the file changed while the site was read (now another file or a link)"
            }
            Refusal::NotRegular => "not a regular file (a FIFO, socket or device)",
        }
    }
}

/// Opens `path` and checks that it is the file `id` names.
pub(super) fn open_checked(path: &Path, id: FileId) -> std::io::Result<Result<File, Refusal>> {
    let file = match open_no_block(path, !id.via_link) {
        Ok(f) => f,
        Err(e) if is_link_refused(&e) => return Ok(Err(Refusal::Changed)),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Err(Refusal::NotRegular));
    }
    if FileId::of(&meta, id.via_link) != id {
        return Ok(Err(Refusal::Changed));
    }
    Ok(Ok(file))
}

#[cfg(unix)]
fn dev_ino(meta: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn dev_ino(_: &Metadata) -> (u64, u64) {
    (0, 0)
}

#[cfg(unix)]
fn open_no_block(path: &Path, no_follow: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK;
    if no_follow {
        flags |= libc::O_NOFOLLOW;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_block(path: &Path, _no_follow: bool) -> std::io::Result<File> {
    File::open(path)
}

/// `O_NOFOLLOW` met a symbolic link.
#[cfg(unix)]
fn is_link_refused(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_link_refused(_: &std::io::Error) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;

    fn id_of(path: &Path) -> FileId {
        FileId::of(&std::fs::symlink_metadata(path).unwrap(), false)
    }

    fn read(f: File) -> String {
        let mut s = String::new();
        { f }.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn the_file_the_walk_saw_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("a.html");
        std::fs::write(&page, "<p>kept</p>").unwrap();
        let f = open_checked(&page, id_of(&page)).unwrap().unwrap();
        assert_eq!(read(f), "<p>kept</p>");
    }

    #[test]
    fn a_page_swapped_for_a_link_out_of_the_site_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("passwd");
        std::fs::write(&secret, "root:x:0:0").unwrap();
        let site = tempfile::tempdir().unwrap();
        let page = site.path().join("p.html");
        std::fs::write(&page, "<p>page</p>").unwrap();
        let id = id_of(&page);
        // The swap `ln -sf /etc/passwd tmp && mv -f tmp p.html` does.
        let tmp = site.path().join("tmp");
        std::os::unix::fs::symlink(&secret, &tmp).unwrap();
        std::fs::rename(&tmp, &page).unwrap();
        assert_eq!(
            open_checked(&page, id).unwrap().unwrap_err(),
            Refusal::Changed
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("p.html"), "secret").unwrap();
        let site = tempfile::tempdir().unwrap();
        let sub = site.path().join("d");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("p.html"), "<p>page</p>").unwrap();
        let id = id_of(&sub.join("p.html"));
        std::fs::rename(&sub, site.path().join("gone")).unwrap();
        std::os::unix::fs::symlink(outside.path(), &sub).unwrap();
        assert_eq!(
            open_checked(&sub.join("p.html"), id).unwrap().unwrap_err(),
            Refusal::Changed
        );
    }

    #[test]
    fn a_page_swapped_for_a_fifo_is_refused_without_waiting_for_a_writer() {
        let site = tempfile::tempdir().unwrap();
        let page = site.path().join("p.html");
        std::fs::write(&page, "<p>page</p>").unwrap();
        let id = id_of(&page);
        std::fs::remove_file(&page).unwrap();
        let c = std::ffi::CString::new(page.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Opening a FIFO for reading blocks until a writer comes unless it
        // is opened without blocking: a hang here is the bug.
        assert_eq!(
            open_checked(&page, id).unwrap().unwrap_err(),
            Refusal::NotRegular
        );
    }

    #[test]
    fn a_link_the_walk_followed_is_read_through_while_it_points_at_the_same_file() {
        let site = tempfile::tempdir().unwrap();
        let target = site.path().join("real.html");
        std::fs::write(&target, "<p>real</p>").unwrap();
        let link = site.path().join("alias.html");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let id = FileId::of(&std::fs::metadata(&link).unwrap(), true);
        assert_eq!(
            read(open_checked(&link, id).unwrap().unwrap()),
            "<p>real</p>"
        );
        let other = site.path().join("other.html");
        std::fs::write(&other, "<p>other</p>").unwrap();
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&other, &link).unwrap();
        assert_eq!(
            open_checked(&link, id).unwrap().unwrap_err(),
            Refusal::Changed
        );
    }
}
