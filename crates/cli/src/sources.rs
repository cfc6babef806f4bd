//! The sources `build` and `add` read ([`Sources`]): the paths a build must
//! not overwrite, the index's source description, and each importer run in
//! turn into one writer.

use super::progress::{self, Unit};
use super::Sources;
use gitsense_engine::index::IndexWriter;
use gitsense_engine::Error;
use gitsense_import as import;

impl Sources {
    /// What the sources read, for [`import::check_output`].
    pub fn inputs(&self) -> Vec<import::Input<'_>> {
        let mut inputs = Vec::new();
        if let Some(db) = &self.gitsense_db {
            inputs.push(import::Input::File(db));
        }
        for file in &self.chat_export {
            inputs.push(import::Input::File(file));
        }
        if let Some(dir) = &self.git {
            inputs.push(import::Input::Git(dir));
        }
        if let Some(dir) = &self.docs {
            inputs.push(import::Input::Docs(dir));
        }
        inputs
    }

    /// The index's source description: each source, in import order.
    pub fn description(&self) -> String {
        let mut out = Vec::new();
        if let Some(db) = &self.gitsense_db {
            out.push(format!("gitsense-db:{}", db.display()));
        }
        for file in &self.chat_export {
            out.push(format!("chat-export:{}", file.display()));
        }
        if let Some(dir) = &self.git {
            out.push(format!("git:{}", dir.display()));
        }
        if let Some(dir) = &self.docs {
            out.push(format!(
                "{}{}",
                gitsense_engine::index::DOCS_SOURCE_PREFIX,
                dir.display()
            ));
        }
        out.join(" + ")
    }

    /// The documentation import's options; an error for page globs
    /// without `--docs`.
    pub fn docs_options(&self) -> Result<Option<import::docs::DocsOptions>, Error> {
        if self.docs.is_none() && !(self.pages.exclude.is_empty() && self.pages.include.is_empty())
        {
            return Err(Error::new(
                "options.pages_without_docs",
                "--include and --exclude apply to --docs only",
            ));
        }
        Ok(match &self.docs {
            Some(_) => Some(import::docs::DocsOptions {
                base_url: self.base_url.clone(),
                use_site_index: !self.no_site_index,
                pages: self.pages.filter(&[])?,
            }),
            None => None,
        })
    }

    /// Imports each source in turn into `w`, its ids shifted past the
    /// records of the sources before it (the first source's too when `w`
    /// already holds records: [`IndexWriter::extend`] shifted them).
    pub fn fill(
        &self,
        w: &mut IndexWriter,
        docs_opts: Option<&import::docs::DocsOptions>,
        quiet: bool,
    ) -> Result<import::ImportReport, Error> {
        let mut report = import::ImportReport::default();
        let mut first = true;
        let mut next = |w: &mut IndexWriter| -> Result<(), Error> {
            if !std::mem::take(&mut first) {
                w.next_source()?;
            }
            Ok(())
        };
        if let Some(db) = &self.gitsense_db {
            next(w)?;
            let pb = progress::bar(quiet, "importing GitSense database (records)", Unit::Count);
            let r = import::gitsense_db::import(db, w, &pb)?;
            report.warnings.extend(r.warnings);
        }
        for file in &self.chat_export {
            next(w)?;
            let pb = progress::bar(quiet, "importing chat export", Unit::Bytes);
            let r = import::chat_export::import(file, w, &pb)?;
            report.warnings.extend(r.warnings);
        }
        if let Some(dir) = &self.git {
            next(w)?;
            let pb = progress::bar(quiet, "importing git repository (files)", Unit::Count);
            let opts = import::git::GitOptions {
                branches: self.branch.clone(),
                repo_name: self.repo.clone(),
                max_file_size: self.max_file_size,
            };
            let r = import::git::import(dir, &opts, w, &pb)?;
            report.warnings.extend(r.warnings);
        }
        if let (Some(dir), Some(opts)) = (&self.docs, docs_opts) {
            next(w)?;
            let pb = progress::bar(quiet, "reading documentation (pages)", Unit::Count);
            let r = import::docs::import(dir, opts, w, &pb)?;
            report.warnings.extend(r.warnings);
        }
        Ok(report)
    }
}
