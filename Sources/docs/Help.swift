/// The text of `docs --help` and `docs COMMAND --help`.
enum Help {
    static let tool = """
        docs: the Simple Text Editor's documents, from the command line.

        Usage: docs [--container PATH] COMMAND [ARGUMENTS]

        Commands:
          list                      name, size, modification time and conflicts of each document
                                    and of every other file sync brought
          new NAME [--from FILE|-]  create a document, empty or from a file or standard input
          show NAME                 print a document
          edit NAME                 edit a document in $EDITOR (default vi)
          rename OLD NEW            rename a document; never replaces another
          delete NAME               move a document to the desktop's trash, from which it can be restored
          versions NAME [--prune]   list a document's (or a file's) saved and conflict versions;
                                    --prune removes the old ones to free space
          restore NAME VERSION      make a saved version the current one
          resolve NAME --keep mine|theirs|both | --merge [--version-id ID]
                                    settle a document's conflicts
          watch                     print documents added, changed and removed, until interrupted
          sync [--remote NAME|URL] [--once|--watch] [--resume delete|keep] [--stop]
                                    sync the container with its remote (see remote add), or
                                    with file:///absolute/path, a WebDAV https://host/path/ or
                                    s3://BUCKET/PREFIX; --resume answers a paused sync, --stop
                                    stops the container's agent (see sync --help)
          status                    where each document stands with the remote, even when
                                    it cannot be reached, and the syncs running
          evict NAME                keep a synced document on the server only (a placeholder
                                    stays, and list shows it)
          download NAME             bring back a document kept on the server only
          share NAME [--expires S]  print a link anyone can download the document from, for
                                    S seconds (default 7 days): S3 and Nextcloud/ownCloud only
          remote add NAME URL [--user U] [--password-file FILE] [--identifier ID]
                     [--interval S] [--on-demand] [--allow-http] [--unsafe-server]
                     [--ca-file FILE]
                                    sync the container with a remote, as ubiquity container ID
          remote add NAME s3://BUCKET/PREFIX [--endpoint URL] [--region R] [--profile P]
                                    the same with a key prefix of an S3 store
          remote list               the remotes added, with their containers
          remote remove NAME        stop syncing a container (its documents stay)
          remote test NAME|URL      what a WebDAV server is, and whether sync can trust it
          remote add NAME URL --encrypt [--passphrase-file FILE] [--keep-key]
                                    the same, the server keeping only ciphertext (a
                                    Cryptomator vault, opened in Cryptomator's apps too)
          remote passphrase NAME    change the passphrase of an encrypted remote's vault
          remote check NAME [--repair]
                                    find (and remove) what stopped folder changes left in
                                    an encrypted remote's vault

        Options, anywhere on the line:
          --container PATH  the folder of documents (default: $STE_CONTAINER, else
                            “Simple Text Editor” in your Documents folder, made on first
                            use); a folder named here or in $STE_CONTAINER must exist,
                            except for `remote add`, which makes it
          --json            machine-readable output for list, versions, watch, sync, status,
                            share and remote list
          -h, --help        this help, or a command's with `docs COMMAND --help`
          --version         the version, and which parts of DocumentKit this build has

        NAME is a document's name, with or without “.txt”. An existing document is found by
        its exact name, whatever it holds; a new name with a slash, a leading dot or a control
        character is a usage error. Listings show control characters in names escaped (see
        `docs list --help`); bash's $'…' gives them back: docs show $'two\\nlines'.

        Exit status: 0 success, 1 failure (the message on standard error names the document
        and the reason), 2 bad usage.

        """

    static func text(for command: String) -> String {
        switch command {
        case "list": return list
        case "new": return new
        case "show": return show
        case "edit": return edit
        case "rename": return rename
        case "delete": return delete
        case "versions": return versions
        case "restore": return restore
        case "resolve": return resolve
        case "watch": return watch
        case "sync": return sync
        case "status": return status
        case "remote": return remote
        case "evict", "download": return onDemand
        case "share": return share
        default: return tool
        }
    }

    static let list = """
        Usage: docs list [--json] [--container PATH]

        Lists the documents (the container's “.txt” files, not hidden ones) and every other
        file sync brought (a photo, a PDF; those in folders too) sorted by file name: size in
        bytes, modification time, name, “(file)” for a file that is not a text document, and
        “(N conflicts)” when it has unresolved conflict versions. A document is named without
        “.txt” (Notes); any other file by its path in the container, extension and all
        (photo.jpg, Trips/map.pdf), the name `docs versions` takes and `docs status` shows.
        No file is opened, so this is as fast as `ls -l`.

        Names are escaped as `ls -b` does, except that spaces stay spaces, so that a name
        can neither act on the terminal nor break the listing's lines: a backslash is \\\\,
        a tab, newline or carriage return \\t, \\n or \\r (also \\a \\b \\v \\f), and any
        other control character is written as its bytes in octal (escape is \\033). In bash,
        $'…' turns a listed name back into the name: docs show $'ctl\\033[31mred'.

        --json prints one object:
          {"container": PATH,
           "documents": [{"name": "Notes", "file": "Notes.txt", "path": PATH,
                          "size": BYTES, "modified": "2025-01-31T09:05:00.250Z",
                          "conflicts": COUNT, "kind": "document"|"file"}, ...]}
        “modified” is UTC, ISO 8601 with milliseconds; “conflicts” is the number of
        unresolved conflict versions (0 when this build has no version history).

        """

    static let new = """
        Usage: docs new NAME [--from FILE|-]

        Creates the document NAME.txt, empty, or with the text of FILE, or of standard input
        with `--from -`. The text must be UTF-8; anything else is refused and nothing is
        created. The document is created by a document save, so editors and version history
        see it. Fails if NAME exists. Prints the new document's path.

        """

    static let show = """
        Usage: docs show NAME

        Prints the document's text, read under file coordination (an editor with unsaved
        changes saves them first). A file that is not UTF-8 text is refused with exit
        status 1 rather than printed.

        """

    static let edit = """
        Usage: docs edit NAME

        Copies the document to a temporary file and opens $EDITOR (default vi) on it, on
        this terminal. $EDITOR may hold arguments: it runs as `sh -c "$EDITOR \\"\\$@\\"" FILE`.
        When the editor exits successfully and the text changed, saves it back as a document
        save, so editors showing it reload and version history keeps the old text.

        A read-only document (no write permission in its mode) is refused with exit status 1
        before the editor starts: make it writable first (chmod u+w FILE).

        The document is left unchanged when the editor fails (the edit is discarded), when
        the edited text is not UTF-8, or when another program changed the document meanwhile;
        in the last two cases your text is kept and its path printed.

        """

    static let rename = """
        Usage: docs rename OLD NEW

        Renames a document under file coordination, so an editor showing it follows it.
        Refuses to replace an existing document. Prints the new path.

        """

    static let delete = """
        Usage: docs delete NAME

        Moves the document, under file coordination, to the desktop's trash (the
        freedesktop.org trash: $XDG_DATA_HOME/Trash, by default ~/.local/share/Trash, or
        the trash of the document's own file system, .Trash-UID at its top); an editor
        showing it follows it there. Prints where it went. The file manager's trash,
        `gio trash --list` and trash-cli's `trash-list` show it with its original path
        and restore it there (`trash-restore`); its versions stay in the version store.
        A document on another file system whose trash cannot be made is not deleted: it
        is never copied to the home trash.

        Documents deleted by earlier versions are in the Deleted folder
        ($XDG_DATA_HOME/Simple Text Editor/Deleted), which now holds only what sync sets
        aside; move them back from there.

        """

    static let versions = """
        Usage: docs versions NAME [--prune] [--json]

        Lists the document's other versions, oldest first: identifier, date (to the
        second), the computer that saved it with "this device" or the start of its device
        identifier (two computers may share a name), the program, and whether it is a
        conflict (resolved or not). NAME may be any file `docs list` shows (photo.jpg).

        Which versions are kept: a version of each minute for the last hour (the newest of
        the minute: autosaves of a minute of typing make one), then one an hour for a day,
        then one a day for thirty days; older ones go. Conflict versions are never thinned.
        Versions made on purpose rather than by an autosave (what an explicit save such as
        ste's ^S replaced, the base a sync merges from, the text a restore or a download
        replaced) are all kept for the first hour.

        --prune removes the file's versions now, to free space (a large file's history can
        be as large as the file times its versions), and says how many it removed, how much
        space that freed and the version store's size after (`docs status` shows it too).
        It keeps the unresolved conflict versions, the version sync merges from next and
        those the conflicts merge from; resolved conflict versions go. --json prints
          {"removed": COUNT, "kept": COUNT, "conflicts": COUNT, "mergeBases": COUNT,
           "freedBytes": BYTES, "storeBytes": BYTES}

        --json prints one object:
          {"document": "Notes", "kind": "document"|"file", "path": PATH,
           "versions": [{"id": ID, "modified": DATE|null, "computer": NAME|null,
                         "device": ID|null, "thisDevice": BOOL, "program": NAME|null,
                         "conflict": BOOL, "resolved": BOOL}, ...]}

        """

    static let restore = """
        Usage: docs restore NAME VERSION

        Replaces the document's contents with those of VERSION (an id from `docs versions`).
        The current contents stay in the history.

        """

    static let resolve = """
        Usage: docs resolve NAME --keep mine|theirs|both [--version-id ID]
               docs resolve NAME --merge [--version-id ID]

        Settles one conflict of a document: the file as it is now against one unresolved
        conflict version (an id from `docs versions`; needed only when there are several).
        "Mine" is what was typed on this device and not saved when another program or
        device changed the file: a conflict version saved by this device is mine and the
        file is theirs; a conflict version from another device is theirs and the file mine.
        A device is told by its identifier (`docs versions`), not by its computer's name,
        which other devices may share.
          mine    keep my side at the document's path
          theirs  keep their side at the document's path
          both    keep the file, and save the conflict version as a new document
                  “NAME (conflict from COMPUTER DATE)”; prints its path
        --merge merges the two sides into the document, line by line, from the version
        both started from (the one sync recorded, found in the history): changes of one
        side are taken; each part both sides changed differently keeps both, marked as git
        marks it, for you to finish:
          <<<<<<< this device
          my lines
          =======
          their lines
          >>>>>>> laptop (device 1F0C29A3), 2026-12-06 12:01
        When that version is not found (a conflict another program made, or history
        removed), every part where the sides differ is marked. Prints what it did, with the
        number of marked parts; exits 0 whether or not parts are marked (`grep -c
        '^<<<<<<< '` counts them), 1 when a side is not UTF-8 text.
        Nothing is deleted: the side not kept (with --merge, the file before the merge and
        the conflict version) stays in the history (`docs versions`), and the version is
        marked resolved. Other conflict versions stay unresolved.

        """

    static let sync = """
        Usage: docs sync [--remote NAME|URL] [--once | --watch] [--interval SECONDS] [--json]
                         [--resume delete|keep] [--stop]
                         [--user NAME] [--password-file FILE] [--unsafe-server] [--allow-http]
                         [--ca-file FILE] [--endpoint URL] [--region R] [--profile P]
                         [--encrypt] [--passphrase-file FILE] [--keep-key]

        Syncs the container with a remote: documents changed on one side are copied to the
        other; documents changed on both are merged when their changes do not overlap, and
        otherwise the remote's stays and this computer's becomes a conflict version (see
        `docs versions` and `docs resolve`), on every computer that syncs. Nothing is chosen by
        modification time; documents the remote deleted go to the Deleted folder
        ($XDG_DATA_HOME/Simple Text Editor/Deleted).

        The remote is the one `docs remote add` set for the container, or one given with
        --remote: the NAME of an added remote, a folder given as file:///absolute/path (another
        disk, a mounted share), a WebDAV folder given as https://host/path/ (Apache,
        Nextcloud, ownCloud, a NAS), or an S3 prefix given as s3://BUCKET/PREFIX (see `docs
        remote --help`, with --endpoint, --region and --profile). A remote given once is
        remembered for the container whole: its URL and every setting given with it (the
        user, the password file's path, --unsafe-server, --allow-http, --ca-file, the S3
        settings), never
        a password or a key; a later sync that names no remote reaches the same one the same
        way, and a setting given again replaces the one remembered. A container added with
        `docs remote add` syncs with that remote only: another URL given is refused.

        The remote folder must be apart from the container: one inside the other, however
        either is reached (links, `..`, another mount of the same folder), is refused, since
        each pass would copy the container into itself. A folder is written under its lock,
        which only users who can write the folder can take; a change waits at most 30 seconds
        for it, then fails naming the process and user holding it, and the next sync tries
        again.

        `docs sync --watch` is the container's sync agent: one runs per container (a second
        stops at once), and apps using the ubiquity API start one when none runs. To keep it
        running, install docs/documentkit-sync@.service as a systemd user service (see the
        README). While an agent (or another sync) runs, `docs sync --once` asks it for a pass
        that begins after the request, waits for it, and prints what it did with the exit
        status it would have had here; if that sync ends first, this one syncs itself. `docs
        status` lists the syncs running for you; `docs sync --stop` stops the container's (it
        is killed if it has not stopped 10 seconds later: a pass cut anywhere is finished by
        the next).

        A WebDAV server is probed the first time (see `docs remote test`): sync uses it only
        if it can keep one device from overwriting another's edit (real locks, or If-Match
        with ETags that change on every write). The user name comes from the URL, --user or
        ~/.netrc; the password from --password-file FILE (readable by you only), the
        DOCS_PASSWORD environment variable, or ~/.netrc, never from the command line. A remote
        given with --encrypt is a Cryptomator vault, made there if the remote is empty; its
        passphrase comes as `docs remote --help` says. Plain
        http is refused to any computer but this one unless --allow-http is given. A server
        the probe finds unsafe is refused unless --unsafe-server is given: then every write is
        read back and compared. One that gives no ETags (nginx's dav-ext) is refused even then:
        sync cannot tell what changed on it. HTTPS certificates are verified against the
        system's authorities. For a server whose certificate a private authority signed (a
        home NAS), --ca-file FILE names that authority's certificate (PEM, as curl --cacert
        takes; a self-signed server's own certificate serves too): it is trusted for that
        remote alone, in place of the system's, read at each connection, and refused if
        anyone but you (or root) could change it or its folder. It serves S3 endpoints alike.

          --once            pass until nothing is left to do, then exit (the default)
          --watch           keep syncing until interrupted: at every change here (a save is
                            uploaded within a second) and every change on the remote: a
                            file:// folder is watched (inotify), a network remote asked
                            with one small request every second while this or another
                            device was active in the last two minutes, then less often, up
                            to every --interval seconds (default 30), when a whole pass
                            runs anyway
          --json            the summary as one JSON object

        A pass that would delete more than half of the documents (and more than 10) on one
        side, or finds the container or the remote's folder gone, pauses sync before it
        changes anything: every later sync stops with the reason until you decide. `docs
        status` names each document it would delete, and on which side. Then:
          --resume delete   delete them: the deletions named go ahead, and only those; if the
                            documents to delete changed since, sync pauses again, naming them.
                            For a vanished folder, only once it is back.
          --resume keep     keep them: documents gone from here are downloaded again, those
                            gone from the remote uploaded again, with the folders that held
                            them. A vanished container or WebDAV folder is made again, in a
                            parent folder that exists, and filled from the other side.
        A document kept on the server only that the remote lost cannot be brought back from
        here. While the container's agent (docs sync --watch) runs, --resume leaves the answer
        for it and waits until it has taken it; the agent goes on syncing.

        Exit status: 0 synced, 1 something could not be synced (each named on standard
        error; the next sync tries again), sync is paused, or the remote cannot be used (it
        refused the user or its certificate did not verify, or the probe found it unsafe: the
        message says what to change), 2 bad usage (an option or URL that names no remote).

        """

    static let remote = """
        Usage: docs remote add NAME URL [--user U] [--identifier ID] [--interval S] [--on-demand]
                                        [--container PATH] [--password-file FILE] [--allow-http]
                                        [--unsafe-server] [--ca-file FILE]
               docs remote add NAME s3://BUCKET/PREFIX [--endpoint URL] [--region R] [--profile P]
               docs remote list [--json]
               docs remote remove NAME
               docs remote test NAME|URL [--user U] [--password-file FILE] [--allow-http]
                                         [--ca-file FILE]
               docs remote add NAME URL --encrypt [--passphrase-file FILE] [--keep-key] ...
               docs remote passphrase NAME [--passphrase-file FILE] [--new-passphrase-file FILE]
               docs remote check NAME [--repair] [--passphrase-file FILE]

        add: makes the container (--container, or the Simple Text Editor's) a ubiquity
        container synced with URL (file:///absolute/path, or a WebDAV https://host/path/,
        probed now). NAME is letters, digits, “-”, “_” and “.”. Apps find the container with
        FileManager.default.url(forUbiquityContainerIdentifier: ID); ID is iCloud.NAME unless
        --identifier gives one. --interval S is how often its sync agent passes whatever it
        heard (default 30 seconds; changes here go up as they happen, and changes on the
        remote come within seconds while devices are active: see docs sync --help). The
        settings go in $XDG_CONFIG_HOME/DocumentKit/ubiquity.json (mode 600), with every
        setting given (the user name, the password file's path, --unsafe-server,
        --allow-http, the certificate authority file's path, the S3 settings) and never a
        password (give it as `docs sync --help` says): every later sync, and the sync agent,
        reaches the remote as it was added. --ca-file FILE trusts a private certificate
        authority for this remote (see `docs sync --help`). --on-demand leaves documents new
        from the remote on the server, listed with a placeholder, until opened or downloaded
        (`docs download NAME`); without it every document is downloaded as it comes.

        An s3://BUCKET/PREFIX remote keeps the container under the key prefix of an S3 store:
        AWS (the default, --region R) or one at --endpoint URL (MinIO, Ceph RGW, SeaweedFS).
        Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN,
        else from ~/.aws/credentials at the profile AWS_PROFILE names (else --profile P, else
        default); they are never kept in our files. The store is probed at every start: one
        whose If-None-Match or If-Match is ignored is refused.

        --encrypt (any URL: file://, WebDAV, s3://) keeps the container in a Cryptomator vault
        (format 8) at URL: the server holds only ciphertext, names included, and the same
        vault opens in Cryptomator's apps (docs/Encryption.md). A URL with no vault and no
        files gets a new one; a vault there is opened. The passphrase comes from
        --passphrase-file FILE (its first line; the file must be readable by you only, and its
        path is kept, never the passphrase), else DOCS_PASSPHRASE, else it is asked at the
        terminal (twice for a new vault; 8 characters or more). --keep-key keeps the unlocked
        keys in a file of mode 600 under $XDG_STATE_HOME/DocumentKit/vault-keys, so that the
        sync agent, which has no terminal to ask at, can sync: whoever can read that file can
        read the vault. A wrong passphrase is an error naming the vault, and changes nothing.
        Forgetting the passphrase loses the documents on the server: nobody can recover them.

        list: each remote: name, container folder, URL, user, identifier, whether it is
        encrypted, and whether its sync agent runs. --json prints {"remotes": [{"name",
        "identifier", "container", "url", "user", "passwordFile", "allowsUnsafeServer",
        "allowsInsecureHTTP", "caFile", "encrypted", "passphraseFile", "downloadsEagerly",
        "agentRunning"}, ...]}.

        remove: forgets a remote, and the vault key kept for it; the container's documents stay
        as they are, and so does the vault on the server.

        passphrase: wraps the vault's keys under a new passphrase; nothing is encrypted again,
        and a key kept with --keep-key stays good. The current passphrase is read as for add;
        the new one from --new-passphrase-file FILE, else DOCS_NEW_PASSPHRASE, else asked at
        the terminal twice. Only the vault's masterkey.cryptomator is written, and only if no
        other device changed it meanwhile. Other devices then need the new passphrase (a kept
        key goes on working).

        check: the vault's health check (the passphrase is read as for add). A folder made or
        deleted on a device that stopped midway can leave a directory under d/ that no folder
        reaches: a leftover (empty, or holding only its ID backup), which costs only space; a
        directory no folder reaches that holds encrypted items; a folder whose directory is
        missing. Each problem is a line, then the counts. --repair waits 30 seconds (another
        device may be making a folder right now), looks again, and removes the leftovers still
        unreachable; nothing holding items is ever removed. Exit status 0 when the vault is
        healthy (after the repair), 1 when problems remain.

        test: probes the WebDAV server of remote NAME, or at URL, in a scratch folder (removed
        after) and says what it is: whether its ETags change on every write, whether If-Match
        and If-None-Match hold, whether its locks keep other writers out, whether folder ETags
        change with what is below them. What it finds is kept for `docs sync`.

        Exit status: 0 done (test: the server is safe to sync with), 1 it could not be done or
        the server is not safe (the message says what it failed and what to change), 2 bad
        usage.

        """

    static let share = """
        Usage: docs share NAME|PATH [--expires SECONDS] [--json]

        Prints a link that lets anyone download a copy of the document, as FileManager's
        url(forPublishingUbiquitousItemAt:expiration:) gives it (which runs this command):
        the document must be uploaded already (sync first). PATH is a file's absolute path in
        the container. The link works for SECONDS (default 7 days; the time it ends is printed
        on standard error, or as "expires", seconds since 1970, with --json):

          S3                   a presigned GET of the object, signed with the remote's access
                               key (the link carries the key's id and a signature, never the
                               secret); at most 7 days
          Nextcloud, ownCloud  a public link share made through their sharing API, kept by
                               the server to the end of the day it expires
          any other remote     none: a folder remote (file://) and other WebDAV servers have
                               no share links, and the message says so

        Exit status: 0 done, 1 it could not be done (not uploaded, no remote, a remote without
        share links, the server's refusal), 2 bad usage.

        """

    static let onDemand = """
        Usage: docs evict NAME
               docs download NAME

        evict: keeps the document on the server only, as FileManager's evictUbiquitousItem
        does: its file here is replaced by a placeholder (.NAME.txt.icloud) that `docs list`
        shows with the size on the server, “(on the server only)”. Only a document whose
        changes are all uploaded is evicted; otherwise nothing changes and the message says
        to sync first.

        download: brings the document back. The container's sync agent fetches it when one
        runs (this waits for it); otherwise this runs one sync of the container.

        Exit status: 0 done, 1 it could not be done (not uploaded yet, no such document, no
        remote), 2 bad usage.

        """

    static let status = """
        Usage: docs status [--json]

        Prints each document with where it stands with the container's remote: synced, to
        upload, to download, changed on both sides, to delete, to move, conflict, on the
        server only, or not synced. Reads only; works while `docs sync --watch` runs.
        Every other file sync carries is listed the same way, by its path, with a third
        column: STATE<TAB>photo.jpg<TAB>file. Then one line for the version store, which
        keeps the files' history: versions<TAB>SIZE<TAB>PATH (`docs versions NAME --prune`
        frees space).

        While sync is paused (see `docs sync --help`), first says why, then each document it
        would delete, by side, with counts, and what `docs sync --resume delete` and
        `docs sync --resume keep` would do. --json prints
          {"paused": null | {"reason": "deletingHere"|"deletingOnRemote"|"containerGone"|
                             "remoteGone", "message": TEXT, "since": DATE, "documents": COUNT,
                             "deleteHereCount": COUNT, "deleteHere": [PATH, ...],
                             "deleteOnRemoteCount": COUNT, "deleteOnRemote": [PATH, ...]},
           "documents": [{"name": "Notes", "file": "Notes.txt", "kind": "document"|"file",
                          "state": STATE}, ...],
           "versionStore": {"path": PATH, "bytes": BYTES}}
        Paused because the remote's folder is gone, it says so and exits 0 though the remote
        cannot be listed.

        When the remote cannot be reached, the first line says why and when a sync last
        reached it, and each document's state is as the remote was then (what waits here to
        upload, move or delete; conflicts); exit status 0. --json gives it as
          "unreachable": null | {"message": TEXT, "lastReached": DATE | null}

        Last, one line for each sync running for you, on any container:
          agent<TAB>process PID<TAB>CONTAINER     (docs sync --watch: stop it with
                                                   docs sync --stop)
          sync<TAB>process PID<TAB>CONTAINER      (a sync that runs once)
        --json gives them as "syncs": [{"pid": PID, "container": PATH, "agent": BOOL}, ...].

        """

    static let watch = """
        Usage: docs watch [--json]

        Prints a line for every document added, changed or removed in the container, as it
        happens, until interrupted (SIGINT or SIGTERM end it with exit status 0):
          added NAME
          changed NAME
          removed NAME
        A rename is a removal and an addition. Names are escaped as in `docs list`. Once
        watching, says so on standard error.

        --json prints one object per line:
          {"event": "added"|"changed"|"removed", "name": "Notes", "file": "Notes.txt",
           "size": BYTES|null, "modified": DATE|null}
        (size and modified are null for a removal).

        """
}
