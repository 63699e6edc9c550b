// Package egress is the network egress proxy a sandbox's caller serves.
package egress
