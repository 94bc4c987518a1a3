"""``nbgrader collect`` that follows no link: the course's ``ExchangeFactory.collect``.

nbgrader's exchange collect copies each hand-in from the exchange's ``inbound/`` (a folder the
students write) into ``submitted/`` with ``shutil.copytree``, which copies what a symbolic link
points to. A student who hands in ``optimizers.ipynb`` as a link to the instructor's
``source/optimizers/optimizers.ipynb`` -- readable by the instructor, who runs collect -- would
get the reference copied in as their own notebook, and graded: full marks.

``LinkRefusingCollect`` (set in the course's ``nbgrader_config.py``) refuses such a hand-in by
name in nbgrader's log and collects nothing of it: no link is followed, and none is copied. A
link that appears while the hand-in is copied is copied as a link, found, and the copy removed.
Two more hand-ins that stopped nbgrader's collect for the whole class are refused by name in the
log instead: one over the course's ``max_dir_size``, and one whose folder name holds no time
stamp. Everything else is nbgrader's collect (owners, timestamps, ``--update``).
"""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from .handin import HandInError, links_under, shown

# A hand-in whose folder name holds no readable time stamp (students write inbound/): sorted last,
# then left out of what is collected, by name, instead of stopping the collect for everyone.
_UNREADABLE = datetime.datetime.min


class LinkRefusingCollect(ExchangeCollect):
    def _path_to_record(self, path):
        try:
            return super()._path_to_record(path)
        except (ValueError, OverflowError) as exc:  # dateutil's ParserError is a ValueError
            name = os.path.basename(path)
            self.log.error("NOT COLLECTED %s: no time stamp in its name (%s)", shown(name), type(exc).__name__)
            return {"username": name.split("+", 1)[0], "filename": name, "timestamp": _UNREADABLE}

    def init_src(self):
        super().init_src()
        self.src_records = [r for r in self.src_records if r["timestamp"] is not _UNREADABLE]

    def do_copy(self, src, dest, log=None):
        from nbgrader.utils import ignore_patterns

        src, dest = str(src), str(dest)
        try:
            links = links_under(Path(src))
        except HandInError as exc:
            self.log.error("NOT COLLECTED %s: %s", shown(src), exc)
            return
        if links:
            self.log.error(
                "NOT COLLECTED %s: symbolic link(s) %s; a link is never followed or collected "
                "(the student hands in the files themselves)",
                shown(src),
                ", ".join(map(shown, links)),
            )
            return
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:  # nbgrader raises here, which stops the class
            self.log.error(
                "NOT COLLECTED %s: %d bytes, more than the course's maximum of %d",
                shown(src),
                size,
                1000 * self.coursedir.max_dir_size,
            )
            return
        ignore = ignore_patterns(
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size,
            log=self.log,
        )
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)  # a link stays a link: never read through
        late = links_under(Path(dest))
        if late:
            shutil.rmtree(dest, ignore_errors=True)
            self.log.error(
                "NOT COLLECTED %s: symbolic link(s) %s appeared while it was copied",
                shown(src),
                ", ".join(map(shown, late)),
            )
            return
        if self.coursedir.groupshared:
            _share_with_group(dest, self.log)


def _share_with_group(folder: str, log) -> None:
    """Group read and write on everything copied (copytree keeps the student's modes), as nbgrader
    does for a groupshared course: folders ug+rwx and setgid, files ug+rw."""
    for current, _, files in os.walk(folder):
        for path, wanted, mask in [(current, 0o2770, 0o2777)] + [
            (os.path.join(current, f), 0o660, 0o777) for f in files
        ]:
            mode = os.stat(path).st_mode
            if mode & wanted != wanted:
                try:
                    os.chmod(path, (mode | wanted) & mask)
                except PermissionError:
                    log.warning("Could not update permissions of %s to make it groupshared", path)
