package execgrant

// fileVersion identifies a file's content and what it is (see versionOf):
// device and inode (which file), mode (its type and permission bits),
// size, modification and change time. The zero value stands for a path
// that could not be looked at (pathVersion).
type fileVersion struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
}
