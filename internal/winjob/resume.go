package winjob

// The decisions of ResumeSuspendedProcess, as data (built and tested on
// every OS): which thread is the main thread, and whether resuming it left
// the process running.

import "fmt"

// threadFacts is one thread of a process created suspended, as
// ResumeSuspendedProcess found it.
type threadFacts struct {
	tid uint32
	// created is the thread's creation time (FILETIME, 100 ns units); 0
	// when it could not be read (a thread another process injected may
	// refuse THREAD_QUERY_LIMITED_INFORMATION).
	created int64
}

// mainThread picks the main thread among the threads of process pid, given
// in the order of the Toolhelp snapshot. Windows lists a process's threads
// in the order they were created (its thread list), so the main thread,
// which CreateProcess makes with the process, comes first; the threads
// after it are threads created since, such as one that security software
// injects at creation. The pick is checked, not trusted: the main thread's
// creation time must be known, and no other thread may have been created
// before it. Anything else is an error, and nothing is resumed.
func mainThread(pid uint32, threads []threadFacts) (uint32, error) {
	if len(threads) == 0 {
		return 0, fmt.Errorf("process %d has no thread", pid)
	}
	first := threads[0]
	if first.created == 0 {
		return 0, fmt.Errorf("thread %d of process %d (its first): creation time unknown, so it cannot be shown to be the main thread", first.tid, pid)
	}
	for _, th := range threads[1:] {
		if th.created != 0 && th.created < first.created {
			return 0, fmt.Errorf("thread %d of process %d was created before thread %d, the first listed: "+
				"the main thread cannot be told", th.tid, pid, first.tid)
		}
	}
	return first.tid, nil
}

// resumed checks the previous suspend count ResumeThread reported for the
// main thread of a process created suspended: exactly 1, the suspension of
// CREATE_SUSPENDED, which the resume lifted. 0 means the thread was running
// already, so the process ran before it was put in its job; more means it
// is still suspended (someone suspended it again) and the program would
// not run. Both are errors. Other threads (injected ones) are left as they
// are: they do not decide whether the program ran before the assignment.
func resumed(pid, tid, prev uint32) error {
	switch {
	case prev == 0:
		return fmt.Errorf("main thread %d of process %d was not suspended: the process ran before it was assigned to the job", tid, pid)
	case prev > 1:
		return fmt.Errorf("main thread %d of process %d was suspended %d times and is still suspended", tid, pid, prev)
	}
	return nil
}
