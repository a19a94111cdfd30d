// Package libraries adapts real third-party Go lock libraries to the
// harness's Locker contract, so that the scenarios can judge them as they
// judge the catalogue's own locks. Each library comes bare and with a refresh
// loop, because neither renews a lease by itself.
package libraries
