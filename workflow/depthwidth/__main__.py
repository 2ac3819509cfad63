from depthwidth.cli import main

raise SystemExit(main())
