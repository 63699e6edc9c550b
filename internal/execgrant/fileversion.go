package execgrant

// fileVersion identifies a regular file's content (see versionOf).
type fileVersion struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}
