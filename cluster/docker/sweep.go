package docker

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	dc "github.com/ory/dockertest/v3/docker"
)

// ownerLabels returns the labels that name run id and its owning process.
func ownerLabels(id string) map[string]string {
	host, _ := os.Hostname()
	return map[string]string{
		dockerRunLabel:   id,
		dockerPIDLabel:   strconv.Itoa(os.Getpid()),
		dockerHostLabel:  host,
		dockerStartLabel: processStart(os.Getpid()),
	}
}

// ownerGone reports whether the process that labels name is dead on this
// host: its pid runs no process, or another process since.
func ownerGone(labels map[string]string) bool {
	host, _ := os.Hostname()
	if labels[dockerHostLabel] != host {
		return false // another machine's run: we cannot tell
	}
	pid, err := strconv.Atoi(labels[dockerPIDLabel])
	if err != nil || pid <= 0 {
		return true
	}
	if !processAlive(pid) {
		return true
	}
	start := labels[dockerStartLabel]
	return start != "" && processStart(pid) != start
}

// sweepDocker removes the containers, networks and volumes that killed
// runs of this host left. It is best effort: what it cannot remove now,
// the next start tries again.
func sweepDocker(client *dc.Client) {
	_ = removeLabelled(client, dockerRunLabel, ownerGone)
}

// removeLabelled removes the containers, then the networks, then the volumes
// that carry label (key or key=value) and that pick accepts.
func removeLabelled(client *dc.Client, label string, pick func(map[string]string) bool) error {
	var errs []error
	containers, err := client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"label": {label}}})
	errs = append(errs, err)
	for _, c := range containers {
		if pick(c.Labels) {
			err := client.RemoveContainer(dc.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true})
			var gone *dc.NoSuchContainer
			if !errors.As(err, &gone) {
				errs = append(errs, err)
			}
		}
	}
	networks, err := client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {label: true}})
	errs = append(errs, err)
	for _, nw := range networks {
		if pick(nw.Labels) {
			errs = append(errs, client.RemoveNetwork(nw.ID))
		}
	}
	volumes, err := client.ListVolumes(dc.ListVolumesOptions{Filters: map[string][]string{"label": {label}}})
	errs = append(errs, err)
	for _, v := range volumes {
		if pick(v.Labels) {
			errs = append(errs, client.RemoveVolumeWithOptions(dc.RemoveVolumeOptions{Name: v.Name, Force: true}))
		}
	}
	return errors.Join(errs...)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processStart returns the boot ID and start time of process pid, where
// /proc tells them, else "": with them a reused pid does not pass for the owner.
func processStart(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, field 2, may hold spaces; field 22 counts from its end.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 20 {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "." + fields[19]
}
