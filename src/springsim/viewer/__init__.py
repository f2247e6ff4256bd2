"""A live view of a System in a notebook: play, pause, drag nodes, toggle pins, sliders.

:func:`springsim.view` (``entry.view``) makes the widget (anywidget, ``pip install
anywidget``; imported when called). The modules: ``entry`` (``view``), ``widget`` (the
widget and its stepping thread), ``methods`` (the method it steps with, its default
step, the stiff hint), ``protocol`` (the messages and their binary frames),
``controls`` (sliders, the reset point), ``standalone`` (the front end's files and
standalone HTML export), ``snapshot`` (the PNG a notebook output keeps); the front end
itself is ``static/viewer.js`` (drawing and input), ``static/gl.js`` (3D faces in WebGL
2) and ``static/player.js`` (offline playback). This package imports none of them, so
that importing ``standalone`` (as :class:`springsim.History` does) does not import the
widget and, through its snapshot, :mod:`springsim.plot`.
"""
