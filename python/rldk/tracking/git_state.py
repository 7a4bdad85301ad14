"""The state of the code a run used: commit, branch, and the full patch of uncommitted changes (staged and not),
plus the names of untracked files. No git, or not a repository, is recorded as such ("available": false) rather
than raised: a run from a tarball is still a run."""
import os
import shutil
import subprocess

GIT_TIMEOUT_S = 120  # a patch of a huge working tree can take a while; a hung git must not hang training forever

# Options pinned so the patch text depends on the changes only, not on the user's git configuration
# (colour, prefixes, external diff drivers, textconv filters, rename detection, relative paths).
_PINNED_CONFIG = ("-c", "core.quotepath=off", "-c", "color.ui=never", "-c", "diff.noprefix=false",
                  "-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false", "-c", "diff.renames=false")


def _git(args, cwd, check=True):
    proc = subprocess.run(["git", *_PINNED_CONFIG, *args], cwd=cwd, capture_output=True, input=b"",
                          timeout=GIT_TIMEOUT_S, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    if check and proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode("utf-8", "replace").strip() or "git %s failed" % args[0])
    return proc


def _unavailable(reason, code_dir):
    return {"available": False, "error": reason, "code_dir": os.path.abspath(code_dir)}


def capture_git(code_dir=None, hash_bytes=None):
    """The manifest's "git" object for the repository containing `code_dir` (default: the current directory).

    hash_bytes: the function giving "xxh3-128:<hex>" of the patch (rldk.provenance.hash_bytes)."""
    code_dir = code_dir or os.getcwd()
    if shutil.which("git") is None:
        return _unavailable("git is not installed (not on PATH)", code_dir)
    if not os.path.isdir(code_dir):
        return _unavailable("code_dir %s is not a directory" % code_dir, code_dir)
    try:
        top = _git(["rev-parse", "--show-toplevel"], code_dir, check=False)
        if top.returncode != 0:
            return _unavailable(top.stderr.decode("utf-8", "replace").strip() or "not a git repository", code_dir)
        root = top.stdout.decode().strip()
        head = _git(["rev-parse", "--verify", "-q", "HEAD"], root, check=False)
        commit = head.stdout.decode().strip() if head.returncode == 0 else None
        branch_proc = _git(["symbolic-ref", "--short", "-q", "HEAD"], root, check=False)
        branch = branch_proc.stdout.decode().strip() if branch_proc.returncode == 0 else None  # None: detached
        # Against HEAD: staged and unstaged changes of tracked files in one patch. Binary files are named
        # ("Binary files a/x and b/x differ"), not embedded. Before the first commit, against the empty tree.
        base = commit or _git(["hash-object", "-t", "tree", "--stdin"], root).stdout.decode().strip()
        patch_bytes = _git(["diff", base, "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
                            "--dst-prefix=b/", "--"], root).stdout
        patch = patch_bytes.decode("utf-8", "replace")  # the hash below is of the bytes, whatever their encoding
        untracked_raw = _git(["ls-files", "--others", "--exclude-standard", "-z"], root).stdout.decode(
            "utf-8", "replace")
        untracked = sorted(p for p in untracked_raw.split("\0") if p)
    except (OSError, subprocess.SubprocessError, RuntimeError) as e:
        return _unavailable("git failed: %s" % e, code_dir)
    state = {
        "available": True,
        "root": root,
        "commit": commit,
        "branch": branch,
        "dirty": bool(patch) or bool(untracked),
        "patch": patch,
        "patch_hash": hash_bytes(patch_bytes) if hash_bytes else None,
        "untracked": untracked,
    }
    return state
