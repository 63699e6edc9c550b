package mountns

// GitBareProtected is GitProtected for an implicit bare repository: a
// directory dir that is itself a git directory (HEAD, objects/, refs/),
// which git uses as one when run inside it, with its config (which names
// programs git runs: core.sshCommand at git fetch, for one) and its hooks. protect are dir's hooks
// and config, its commondir if it has one (and the common directory's
// hooks and config), and those of its submodules' git directories, as
// GitProtected returns them for a .git directory; pin is dir itself (as a
// mount point it can be neither renamed nor removed, so it cannot be
// replaced by a fresh one with writable hooks). Everything else in dir
// stays writable (objects, refs, HEAD: push and fetch into it work).
func GitBareProtected(dir string, lookup func(string) Kind, readFile func(string) ([]byte, error), readDir func(string) []string) (protect, pin []string) {
	if lookup(dir) != Dir {
		return nil, nil
	}
	gitdirs := []string{dir}
	if common := CommonDirOf(dir, readFile); common != "" {
		gitdirs = append(gitdirs, common)
	}
	return gitDirsProtected(gitdirs, lookup, readDir), []string{dir}
}
